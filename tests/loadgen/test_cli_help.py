"""Every command's --help at 80 columns (COLUMNS=80, as a user's terminal): each example line is printed
whole, so it can be copied; no line is wider than the terminal; no run of blank lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from loadgen.cli.commands import build_app
from loadgen.cli.help_text import fit_help

GOODPUT = str(Path(sys.executable).with_name("goodput"))
COMMANDS = ["", "run", "report", "gate", "compare", "sweep", "capacity", "serve", "plan", "dashboards",
            "dashboards export", "trace", "trace inspect", "predict"]


def _source_help(path: str) -> str:
    command = typer.main.get_command(build_app())
    for name in path.split():
        command = command.commands[name]  # type: ignore[attr-defined]
    return command.help or ""


def _help_at_80(path: str) -> list[str]:
    env = {**os.environ, "COLUMNS": "80", "TERMINAL_WIDTH": "80"}
    proc = subprocess.run([GOODPUT, *path.split(), "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("path", COMMANDS)
def test_help_reads_at_80_columns(path: str) -> None:
    lines = _help_at_80(path)
    assert max(len(line) for line in lines) <= 80
    description = lines[:next((i for i, x in enumerate(lines) if x.lstrip().startswith("╭")), len(lines))]
    blanks = [i for i in range(1, len(description)) if not description[i].strip() and not description[i - 1].strip()]
    assert blanks == [], f"runs of blank lines in `goodput {path} --help`"
    assert not any("\b" in line for line in lines)
    printed = {line.strip() for line in lines}
    examples = [line.strip() for line in _source_help(path).splitlines() if line.startswith(" ") and line.strip()]
    broken = [line for line in examples if line not in printed]
    assert broken == [], f"example lines of `goodput {path} --help` wrapped at 80 columns: {broken}"


def test_fit_help_reflows_prose_and_keeps_examples() -> None:
    text = "Title line.\n\nProse that was\nbroken by hand.\n\n\b\nExamples:\n  goodput a \\\n      --b\n\n\b\n  goodput c"
    assert fit_help(text) == "Title line.\n\nProse that was broken by hand.\n\nExamples:\n  goodput a \\\n      --b\n\n  goodput c"
