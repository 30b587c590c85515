"""metrics.prom round trip through the exposition parser; push, scrape and delete on a real Pushgateway."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.prometheus.live import LiveConfig, RunMetrics
from exporters.prometheus.pushgateway import PushTarget, delete, push, split_credentials
from exporters.prometheus.textfile import TEXTFILE, write_textfile
from loadgen.cli.run import run_defaults
from loadgen.run.prometheus import PromOptions, prom_options
from loadgen.spec.build import build_spec
from metrics.slo import parse_slo
from tests.exporters import _prom_procs
from tests.exporters._prom_procs import TEST_PASSWORD, TEST_USER, pushgateway
from tests.exporters._records import random_records
from tests.servers.scripted import closed_port

_free_port = _prom_procs.free_port
# Runs against the embedded reference server use its sim engine: these tests are about pushing, and it
# starts in a quarter of the torch engine's time.
SIM = "--server-arg=--engine=sim"


def parse_prom_options(**values: str) -> PromOptions:
    """The Prometheus options a run gets from these option values: parsed and checked in its spec."""
    spec, secrets = build_spec({**run_defaults(), **values})
    return prom_options(spec.prometheus, secrets.pushgateway_password)


def _metrics(run_id: str = "run-1") -> RunMetrics:
    metrics = RunMetrics(LiveConfig(run_id=run_id, slo=parse_slo(["ttft=100ms", "e2e=1s"])))
    for r in random_records(60, seed=5, error_every=6):
        metrics.observe(r)
    return metrics


def _as_set(text: str) -> set[tuple[str, tuple[tuple[str, str], ...], float]]:
    return {(s.name, tuple(sorted(s.labels.items())), s.value)
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_textfile_round_trips_through_the_parser(tmp_path: Path) -> None:
    metrics = _metrics()
    path = write_textfile(tmp_path / "out" / TEXTFILE, metrics.registry)
    assert [p.name for p in path.parent.iterdir()] == [TEXTFILE]  # no temporary file left behind
    text = path.read_text()
    parsed = _as_set(text)
    assert parsed == _as_set(generate_latest(metrics.registry).decode())
    names = {name for name, _, _ in parsed}
    assert {"goodput_ttft_seconds_bucket", "goodput_requests_total", "goodput_good_requests_total"} <= names
    # textfile collector rules: no timestamps, every family typed once
    assert all(len(line.split(" ")) >= 2 for line in text.splitlines() if not line.startswith("#"))
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")]
    assert len(types) == len(set(types))


def test_textfile_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / TEXTFILE
    path.write_text("stale\n")
    write_textfile(path, _metrics().registry)
    assert "stale" not in path.read_text()


def test_push_target_validation() -> None:
    with pytest.raises(ValueError, match="http"):
        PushTarget(url="localhost:9091")
    with pytest.raises(ValueError, match="both"):
        PushTarget(url="http://127.0.0.1:9091", username="u")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:9091", ("http://127.0.0.1:9091", None, None)),
        ("http://alice:s3cret@gw.example:9091", ("http://gw.example:9091", "alice", "s3cret")),
        ("https://alice:p%40ss%3Aw@gw.example/prefix", ("https://gw.example/prefix", "alice", "p@ss:w")),
        ("http://alice:pa@ss@gw.example:9091", ("http://gw.example:9091", "alice", "pa@ss")),
        ("http://alice:@gw.example", ("http://gw.example", "alice", "")),
    ],
)
def test_split_credentials(url: str, expected: tuple[str, str | None, str | None]) -> None:
    assert split_credentials(url) == expected


def test_url_credentials_become_basic_auth_options() -> None:
    opts = parse_prom_options(pushgateway="http://alice:s3cret@127.0.0.1:9091")
    assert (opts.pushgateway, opts.pushgateway_user, opts.pushgateway_password) == ("http://127.0.0.1:9091", "alice", "s3cret")
    assert "s3cret" not in repr(opts)
    plain = parse_prom_options(pushgateway="http://127.0.0.1:9091", pushgateway_user="bob", pushgateway_password="pw")
    assert (plain.pushgateway, plain.pushgateway_user, plain.pushgateway_password) == ("http://127.0.0.1:9091", "bob", "pw")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pushgateway_user": "bob", "pushgateway_password": "pw"}, "--pushgateway-user"),
        ({"pushgateway_password": "pw"}, "--pushgateway-user"),
    ],
)
def test_url_credentials_and_user_flags_together_are_refused(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        parse_prom_options(pushgateway="http://alice:s3cret@127.0.0.1:9091", **kwargs)
    assert "s3cret" not in str(info.value)


def test_a_url_user_without_password_is_refused() -> None:
    with pytest.raises(ValueError, match="no password") as info:
        parse_prom_options(pushgateway="http://alice@127.0.0.1:9091")
    assert "--pushgateway-user" in str(info.value)


def test_a_push_target_never_takes_a_url_with_credentials() -> None:
    with pytest.raises(ValueError, match="credentials") as info:
        PushTarget(url="http://alice:s3cret@127.0.0.1:9091")
    assert "s3cret" not in str(info.value)
    with pytest.raises(ValueError, match="http") as info:
        PushTarget(url="alice:s3cret@127.0.0.1:9091")  # no scheme: the message still hides the password
    assert "s3cret" not in str(info.value)
    assert "s3cret" not in repr(PushTarget(url="http://127.0.0.1:9091", username="alice", password="s3cret"))


def test_push_failure_is_a_clear_error_without_credentials() -> None:
    with closed_port() as port:
        target = PushTarget(url=f"http://127.0.0.1:{port}", run_id="r", username="alice", password="s3cret")
        with pytest.raises(RuntimeError, match="Pushgateway") as info:
            push(target, _metrics().registry)
    assert "s3cret" not in str(info.value)


def test_a_pushgateway_whose_port_was_taken_starts_on_another(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper's retry: the Pushgateway is told its port before it starts (it cannot bind port 0 and
    report it), and another process may take that port in between; here one does, on purpose."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        chosen: list[int] = []

        def first_taken() -> int:
            chosen.append(taken.getsockname()[1] if not chosen else _free_port())
            return chosen[-1]

        monkeypatch.setattr(_prom_procs, "free_port", first_taken)
        with pushgateway(tmp_path) as url:
            assert httpx.get(f"{url}/-/ready", timeout=10).status_code == 200
        assert len(chosen) == 2 and url == f"http://127.0.0.1:{chosen[1]}"


def test_push_scrape_delete(tmp_path: Path) -> None:
    with pushgateway(tmp_path) as url:
        w0 = PushTarget(url=url, job="goodput-test", run_id="run-42", worker=0)
        w1 = PushTarget(url=url, job="goodput-test", run_id="run-42", worker=1)
        push(w0, _metrics("run-42").registry)
        push(w1, _metrics("run-42").registry)
        scraped = httpx.get(f"{url}/metrics", timeout=10).text
        groups = {(s.labels.get("job"), s.labels.get("run_id"), s.labels.get("worker"))
                  for f in text_string_to_metric_families(scraped) for s in f.samples
                  if s.name == "goodput_requests_total"}
        assert groups == {("goodput-test", "run-42", "0"), ("goodput-test", "run-42", "1")}
        count = [s.value for f in text_string_to_metric_families(scraped) for s in f.samples
                 if s.name == "goodput_ttft_seconds_count" and s.labels.get("worker") == "0"]
        assert sum(count) == 50  # 60 requests, every 6th failed
        delete(w0)
        after = httpx.get(f"{url}/metrics", timeout=10).text
        workers = {s.labels.get("worker") for f in text_string_to_metric_families(after) for s in f.samples
                   if s.name == "goodput_requests_total"}
        assert workers == {"1"}


def test_push_with_basic_auth(tmp_path: Path) -> None:
    with pushgateway(tmp_path, basic_auth=True) as url:
        anonymous = PushTarget(url=url, run_id="auth")
        with pytest.raises(RuntimeError, match="Pushgateway"):
            push(anonymous, _metrics().registry)
        target = PushTarget(url=url, run_id="auth", username=TEST_USER, password=TEST_PASSWORD)
        push(target, _metrics().registry)
        scraped = httpx.get(f"{url}/metrics", auth=(TEST_USER, TEST_PASSWORD), timeout=10).text
        assert 'run_id="auth"' in scraped
        delete(target)


def test_push_with_credentials_in_the_url(tmp_path: Path) -> None:
    with pushgateway(tmp_path, basic_auth=True) as url:
        authority = url.removeprefix("http://")
        wrong = parse_prom_options(pushgateway=f"http://{TEST_USER}:wrong-password@{authority}")
        assert wrong.pushgateway is not None
        target = PushTarget(url=wrong.pushgateway, run_id="url-auth", username=wrong.pushgateway_user,
                            password=wrong.pushgateway_password)
        with pytest.raises(RuntimeError) as info:
            push(target, _metrics().registry)
        # the cause is visible (the gateway refused the credentials), the URL shown is the one used
        assert str(info.value) == f"push to Pushgateway {url} failed: Unauthorized"
        right = parse_prom_options(pushgateway=f"http://{TEST_USER}:{TEST_PASSWORD}@{authority}")
        assert right.pushgateway is not None
        push(PushTarget(url=right.pushgateway, run_id="url-auth", username=right.pushgateway_user,
                        password=right.pushgateway_password), _metrics().registry)
        scraped = httpx.get(f"{url}/metrics", auth=(TEST_USER, TEST_PASSWORD), timeout=10).text
        assert 'run_id="url-auth"' in scraped


@pytest.mark.slow
def test_goodput_run_with_credentials_in_the_pushgateway_url(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The run pushes with basic auth, and the password is in no output file, message or label."""
    from loadgen.cli import run_cli

    with pushgateway(tmp_path, basic_auth=True) as url:
        out = tmp_path / "run"
        gateway = f"http://{TEST_USER}:{TEST_PASSWORD}@{url.removeprefix('http://')}"
        code = run_cli(["run", SIM, "--requests", "3", "--rate", "50", "--output-tokens", "4", "--quiet",
                        "--server-metrics", "none", "--pushgateway", gateway, "--output", str(out)])
        printed = capfd.readouterr()
        assert code == 0, printed.err
        scraped = httpx.get(f"{url}/metrics", auth=(TEST_USER, TEST_PASSWORD), timeout=10).text
        assert f'run_id="{out.name}"' in scraped
        written = [p for p in out.rglob("*") if p.is_file()]
        assert {p.name for p in written} >= {"run.json", "summary.json", "metrics.prom"}
        for text in [printed.out, printed.err, scraped, *(p.read_bytes().decode("utf-8", "replace") for p in written)]:
            assert TEST_PASSWORD not in text
        both = run_cli(["run", "--requests", "1", "--quiet", "--pushgateway", gateway, "--pushgateway-user", "x",
                        "--pushgateway-password", "y", "--output", str(tmp_path / "refused")])
        printed = capfd.readouterr()
        assert both == 2
        assert "--pushgateway-user" in printed.err
        assert TEST_PASSWORD not in printed.err + printed.out


@pytest.mark.slow
def test_goodput_run_pushes_and_deletes(tmp_path: Path) -> None:
    from loadgen.cli import run_cli

    def groups(url: str) -> set[tuple[str | None, str | None, str | None]]:
        text = httpx.get(f"{url}/metrics", timeout=10).text
        return {(s.labels.get("job"), s.labels.get("run_id"), s.labels.get("worker"))
                for f in text_string_to_metric_families(text) for s in f.samples if s.name == "goodput_requests_total"}

    with pushgateway(tmp_path) as url:
        base = ["run", SIM, "--requests", "4", "--rate", "50", "--output-tokens", "4", "--quiet", "--server-metrics", "none",
                "--pushgateway", url, "--pushgateway-job", "gp-cli"]
        assert run_cli([*base, "--output", str(tmp_path / "kept")]) == 0
        assert groups(url) == {("gp-cli", "kept", "0")}
        assert run_cli([*base, "--output", str(tmp_path / "gone"), "--pushgateway-interval", "0.2s",
                        "--pushgateway-delete"]) == 0
        assert groups(url) == {("gp-cli", "kept", "0")}  # the second run cleaned up after itself
