"""Nothing lost, nothing misleading on disk: an earlier run is never overwritten silently, an unusable
output directory is a usage error before anything is sent, a run that sends nothing leaves no directory,
a full disk stops the run with one line and whole records, a run where nothing worked exits 1, and every
file gets the user's umask."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import resource
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.run.directory import prepare_run_dir, run_files

GOODPUT = str(Path(sys.executable).with_name("goodput"))
UNREACHABLE = "http://127.0.0.1:9"  # discard port: nothing listens
NO_MODEL = ["run", "--url", UNREACHABLE, "--requests", "2", "--quiet"]  # would fail at the model probe (exit 1)
SMALL = ["--rate", "50", "--prompt-tokens", "20", "--output-tokens", "4", "--quiet", "--server-metrics", "none"]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from loadgen.run.embedded import embedded_server

    with embedded_server(["--engine=sim"]) as url:
        yield url


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _old_run(path: Path) -> dict[str, bytes]:
    path.mkdir()
    files = {"records.jsonl": b'{"id": 0}\n' * 29, "run.json": b"{}\n", "server_metrics.jsonl": b"{}\n",
             "notes.txt": b"mine\n"}
    for name, data in files.items():
        (path / name).write_bytes(data)
    return files


# -- an earlier run (item 2) --

def test_an_existing_run_is_refused_and_left_intact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    files = _old_run(out)
    assert run_cli([*NO_MODEL, "--output", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "already holds a run" in line and "--overwrite" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files


def test_overwrite_removes_exactly_the_old_run(tmp_path: Path, server: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    _old_run(out)
    assert run_cli(["run", "--url", server, "--requests", "2", *SMALL, "--output", str(out), "--overwrite"]) == 0
    assert "--overwrite: removed the earlier run's records.jsonl, run.json, server_metrics.jsonl" in capsys.readouterr().err
    assert len((out / "records.jsonl").read_bytes().splitlines()) == 2
    assert not (out / "server_metrics.jsonl").exists()  # the old run's, not rewritten with --server-metrics none
    assert (out / "notes.txt").read_bytes() == b"mine\n"  # not a run file: untouched


def test_default_directories_never_collide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    same_second = dt.datetime(2025, 1, 2, 3, 4, 5)
    dirs = [prepare_run_dir(None, now=same_second).path for _ in range(3)]
    assert [d.name for d in dirs] == ["20250102-030405", "20250102-030405-2", "20250102-030405-3"]
    assert all(d.is_dir() and d.parent == Path("runs") for d in dirs)


# -- unusable output (item 3): one line, exit 2, before the model probe --

def _usage_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = run_cli([*NO_MODEL, *args])
    line = _one_line(capsys.readouterr().err)
    assert code == 2, line
    assert line.startswith("goodput") and "Traceback" not in line
    return line


def test_output_under_proc_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot create --output /proc/goodput-x" in _usage_error(["--output", "/proc/goodput-x"], capsys)


def test_output_below_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    line = _usage_error(["--output", str(tmp_path / "file" / "run")], capsys)
    assert "Not a directory" in line


@pytest.mark.parametrize("name", run_files())
@pytest.mark.parametrize("overwrite", [False, True])
def test_a_result_name_taken_by_a_directory_is_a_usage_error(name: str, overwrite: bool, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    (out / name).mkdir(parents=True)
    (out / name / "keep").write_text("x")
    line = _usage_error(["--output", str(out), *(["--overwrite"] if overwrite else [])], capsys)
    assert f"{out / name} is a directory" in line
    assert (out / name / "keep").read_text() == "x"  # never removed, even with --overwrite


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
@pytest.mark.parametrize("sub", ["", "new-run"])
def test_a_read_only_directory_is_a_usage_error(sub: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert "Permission denied" in _usage_error(["--output", str(locked / sub)], capsys)
    finally:
        locked.chmod(0o755)
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize("sub", ["", "new-run"])
def test_a_directory_refusing_writes_is_a_usage_error_whoever_runs_it(
        sub: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The test above cannot run as root (CI runs as root): here the kernel's refusal is given directly,
    to the two calls that meet it, creating the run's directory in `locked` and the probe file in it."""
    import errno
    import tempfile

    locked = tmp_path / "locked"
    locked.mkdir()

    refusals: list[str] = []

    def refused(path: object) -> PermissionError:
        refusals.append(str(path))
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    real_mkdir, real_mkstemp = Path.mkdir, tempfile.mkstemp

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if self.parent == locked:
            raise refused(self)
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    def mkstemp(*args: object, dir: object = None, **kwargs: object) -> tuple[int, str]:
        if dir is not None and Path(str(dir)) == locked:
            raise refused(Path(str(dir)) / ".goodput-probe-x")
        return real_mkstemp(*args, dir=dir, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    assert "Permission denied" in _usage_error(["--output", str(locked / sub)], capsys)
    assert refusals and list(locked.iterdir()) == []


# -- a run that sends nothing leaves nothing (item 4) --

def test_a_run_that_fails_before_the_first_request_leaves_no_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_cli(NO_MODEL) == 1  # default runs/<timestamp>
    assert "connection refused" in capsys.readouterr().err  # the model listing could not connect
    assert not (tmp_path / "runs").exists()
    given = tmp_path / "a" / "b"
    assert run_cli([*NO_MODEL, "--output", str(given)]) == 1
    assert not (tmp_path / "a").exists()
    kept = tmp_path / "existing"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    assert run_cli([*NO_MODEL, "--output", str(kept)]) == 1
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]


# -- nothing worked (item 8) --

def test_a_run_where_every_request_failed_exits_1_with_one_line(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--requests", "3", *SMALL, "--output", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1  # every request failed alike: the line says so, with the error itself
    assert err[0].startswith("goodput: error: all 3 requests failed the same way: connect_error: ")
    assert json.loads((out / "summary.json").read_text())["requests"]["in_window_ok"] == 0  # outputs still written


def test_a_failed_threshold_keeps_exit_99_when_nothing_worked(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--requests", "2", *SMALL,
                    "--threshold", "errors:rate<0.5", "--output", str(tmp_path / "run")])
    assert code == 99
    assert "goodput: error: all 2 requests failed the same way: connect_error: " in capsys.readouterr().err


# -- umask (item 12) --

def test_every_output_file_gets_the_users_umask(tmp_path: Path, server: str) -> None:
    out = tmp_path / "run"
    run = subprocess.run([GOODPUT, "run", "--url", server, "--requests", "3", *SMALL[:-2],
                          "--server-metrics-interval", "0.2s", "--output", str(out)],
                         capture_output=True, text=True, timeout=120, umask=0o027)
    assert run.returncode == 0, run.stderr
    report = subprocess.run([GOODPUT, "report", str(out), "--quiet", "--textfile"], capture_output=True, text=True,
                            timeout=120, umask=0o027)
    assert report.returncode == 0, report.stderr
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert set(run_files()) <= set(modes)
    assert modes == dict.fromkeys(modes, 0o640)
    assert stat.S_IMODE(out.stat().st_mode) == 0o750


# -- a full disk (item 1) --

def _limit_file_size(limit: int) -> None:
    """In the child: writes past `limit` bytes fail with EFBIG, as they fail with ENOSPC on a full disk
    (Python ignores SIGXFSZ, so the write returns the error)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_disk_stops_the_run_with_one_line_and_whole_records(tmp_path: Path, server: str) -> None:
    out = tmp_path / "run"
    proc = subprocess.run([GOODPUT, "run", "--url", server, "--requests", "150", "--rate", "30",
                           "--prompt-tokens", "20", "--output-tokens", "4", "--quiet", "--server-metrics", "none",
                           "--output", str(out)], capture_output=True, text=True, timeout=180,
                          preexec_fn=lambda: _limit_file_size(16 * 1024))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "Task exception" not in proc.stderr
    assert all(line.startswith("goodput: error: ") for line in proc.stderr.splitlines()), proc.stderr
    records_line = next(line for line in proc.stderr.splitlines() if "records.jsonl:" in line)
    found = re.search(r"cannot write (\S+): File too large; dispatching stopped after (\d+) requests; "
                      r"records.jsonl holds (\d+) of them, (\d+) could not be written", records_line)
    assert found, records_line
    path, dispatched, written, unwritten = found[1], *map(int, found.groups()[1:])
    assert path == str(out / "records.jsonl")
    assert dispatched == written + unwritten < 150  # dispatching stopped at the first failed write
    lines = (out / "records.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) == written > 0
    assert all(line.endswith(b"\n") and json.loads(line)["id"] >= 0 for line in lines)  # no cut record
    run_info = json.loads((out / "run.json").read_text())
    assert run_info["unwritten_records"] == unwritten and run_info["complete"] is False
    assert str(out / "records.jsonl") in run_info["write_error"]

    assert run_cli(["report", str(out), "--quiet"]) == 0  # space is back (no limit here)
    assert json.loads((out / "summary.json").read_text())["requests"]["records"] == written


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize("given", ["", ".", "./"])
def test_the_current_directory_is_refused_unless_empty(command: str, given: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine\n")
    args = NO_MODEL if command == "run" else ["sweep", "--url", UNREACHABLE, "--rates", "1", "--point-requests", "1"]
    assert run_cli([*args, "--output", given]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "--output '' or '.' is the current directory, which is not empty" in line
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_empty_current_directory_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert prepare_run_dir(Path("")).path == Path(".")


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 128 KiB tmpfs: a disk that really fills up (ENOSPC for every file), where mounting one is allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_keeps_the_count_of_lost_records_for_report(tiny_disk: Path, server: str, tmp_path: Path) -> None:
    import shutil

    out = tiny_disk / "run"
    proc = subprocess.run([GOODPUT, "run", "--url", server, "--requests", "300", "--rate", "100", "--prompt-tokens", "20",
                           "--output-tokens", "4", "--quiet", "--server-metrics", "none", "--no-html", "--output",
                           str(out)], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 1, proc.stderr
    found = re.search(r"records.jsonl holds (\d+) of them, (\d+) could not be written", proc.stderr)
    assert found, proc.stderr
    written, unwritten = map(int, found.groups())
    assert "?" not in proc.stderr and "unnamed" not in proc.stderr  # every file that failed is named
    assert "could not write metrics.prom, run.json, summary.json" in proc.stderr
    assert "interrupted" not in json.loads((out / "run.json").read_text())  # the final run.json never made it

    freed = tmp_path / "copy"  # space is back: the same files on a disk with room
    shutil.copytree(out, freed)
    report = subprocess.run([GOODPUT, "report", str(freed)], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    header = report.stdout.splitlines()[0]
    assert header.endswith("[INCOMPLETE: records could not be written: No space left on device]"), header
    assert f"requests: {written} = {written} sent" in report.stdout
    assert f"the run could not write {unwritten} record(s)" in report.stderr and unwritten > 0
