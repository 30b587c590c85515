"""`goodput serve --engine sim` flags: validated before the server starts."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(("flag", "needle"), [("--sim-gpu=Z100", "Z100"), ("--sim-model=nope-13B", "nope-13B"),
                                              ("--sim-efficiency=0", "efficiency")])
def test_bad_sim_flags_exit_2(flag: str, needle: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "refserver", "--port", "0", "--engine", "sim", flag],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
