"""The profile runs the reference server under `goodput run` load and accounts for every part per token."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.profile_refserver import ROWS

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_profile_prints_every_part_with_shares_adding_up() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.profile_refserver", "--builtin-tiny", "--concurrency", "4",
         "--prompt-tokens", "16", "--output-tokens", "16", "--duration", "2", "--warmup", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = dict(re.findall(r"^\| ([^|*]+?) \| ([\d.]+) \| (?:[\d.]+) % \|", done.stdout, re.MULTILINE))
    for name, *_ in ROWS:
        assert name in rows, done.stdout
    top_level = {k: float(v) for k, v in rows.items() if not k.startswith(" ")}
    assert float(rows["forward (model + lm head)"]) > 0
    assert sum(float(v) for v in top_level.values()) == pytest.approx(sum(map(float, re.findall(
        r"^\| \*\*process total\*\* \| \*\*([\d.]+)\*\*", done.stdout, re.MULTILINE))), rel=0.01)  # fmt: skip
    match = re.search(r"^(\d+) tokens in (\d+) engine steps", done.stdout, re.MULTILINE)
    assert match is not None and int(match.group(1)) > 0
