"""`goodput dashboards export DIR` where DIR cannot take the bundle: one line on stderr, never a traceback;
exit 2 when the directory itself is unusable (nothing written), 1 when a file in it cannot be written."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.cli import run_cli


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("goodput dashboards export: error:"), err
    assert captured.out == ""  # no path printed: nothing was written
    return err


def test_a_directory_that_cannot_be_created_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["dashboards", "export", "/proc/nope"]) == 2  # /proc takes no new directory
    assert "cannot create /proc/nope" in _one_line_error(capsys)


@pytest.mark.parametrize("below", ["", "sub/dir"], ids=["the file itself", "a path under the file"])
def test_a_file_is_not_a_directory(below: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    assert run_cli(["dashboards", "export", str(a_file / below) if below else str(a_file)]) == 2
    assert f"{a_file} is a file, not a directory" in _one_line_error(capsys)
    assert a_file.read_text() == "keep me"


def test_a_file_that_cannot_be_written_is_one_line_and_exit_1(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "grafana").write_text("a file where the bundle wants a folder")
    assert run_cli(["dashboards", "export", str(tmp_path)]) == 1
    assert f"could not write {tmp_path / 'grafana'}" in _one_line_error(capsys)
