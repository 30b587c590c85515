"""The output directory of `goodput run`: chosen, checked and created before anything is sent.

- `--output DIR` that already holds a run (any of `run_files()`) is refused, so an earlier run is never
  cut or mixed with a new one; `--overwrite` removes exactly those files first, nothing else in DIR.
- A run file name that exists as a directory is refused even with `--overwrite` (it is never removed).
- The directory must be creatable and writable: a probe file is created and removed in it.
- `--output ''` or `.` (the current directory) is refused unless that directory is empty.
- The default `runs/<timestamp>` is created with an exclusive mkdir, so two runs started in the same
  second get two directories (`runs/<timestamp>-2`, ...).
- A run that ends before its first request is sent leaves nothing behind: `discard` removes the files it
  wrote and the directories it created.

Every refusal is an `OutputDirError` whose message is one line for the usage error (exit 2).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = Path("runs")
MAX_SUFFIX = 1000


class OutputDirError(ValueError):
    """The output directory cannot be used; the message names it and the reason."""


def run_files() -> tuple[str, ...]:
    """Every file a run writes in its directory (imported here: `goodput --help` stays light)."""
    from metrics.results import RUN_FILES

    return RUN_FILES


@dataclass(frozen=True, slots=True)
class RunDir:
    path: Path
    created_root: Path | None  # the topmost directory this run created (None: `path` existed before)


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def make_dirs(path: Path) -> Path | None:
    """mkdir -p that also returns the topmost directory it created (None if `path` existed)."""
    missing: list[Path] = []
    probe = path
    while not probe.exists() and not probe.is_symlink():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        directory.mkdir()  # exist_ok=False: a concurrent creator is reported, never shared
    return missing[-1] if missing else None


def _fresh_default(root: Path, now: dt.datetime) -> RunDir:
    """runs/<timestamp>, or runs/<timestamp>-N when another run took that name first."""
    created_root = None if root.is_dir() else make_dirs(root)
    stamp = now.strftime("%Y%m%d-%H%M%S")
    for n in range(1, MAX_SUFFIX + 1):
        path = root / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return RunDir(path, created_root or path)
    raise OutputDirError(f"no free run directory name under {root} for {stamp}")


def _clear_earlier_run(path: Path, *, overwrite: bool, notice: Callable[[str], None]) -> None:
    present = [name for name in run_files() if (path / name).exists() or (path / name).is_symlink()]
    for name in present:
        target = path / name
        if target.is_dir() and not target.is_symlink():
            raise OutputDirError(f"--output {path}: {target} is a directory; the run writes a file of that name")
    if not present:
        return
    if not overwrite:
        raise OutputDirError(f"--output {path} already holds a run ({', '.join(present)}); "
                             "choose another directory or pass --overwrite to replace it")
    for name in present:
        try:
            (path / name).unlink()
        except OSError as exc:
            raise OutputDirError(f"--overwrite: cannot remove {path / name}: {_why(exc)}") from None
    notice(f"goodput: --overwrite: removed the earlier run's {', '.join(present)} from {path}")


def refuse_current_dir(output: Path) -> None:
    """`--output ''` or `--output .` is the current directory: taken only while it is empty, so a run is
    never spread among files it did not write by an option left empty by mistake (OutputDirError)."""
    if output == Path(".") and output.is_dir() and any(output.iterdir()):
        raise OutputDirError("--output '' or '.' is the current directory, which is not empty; give the "
                             "results a directory of their own")


def check_writable(path: Path) -> None:
    fd, probe = tempfile.mkstemp(dir=path, prefix=".goodput-probe-")
    os.close(fd)
    os.unlink(probe)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def prepare_run_dir(output: Path | None, *, overwrite: bool = False, now: dt.datetime | None = None,
                    notice: Callable[[str], None] = _to_stderr) -> RunDir:
    """Choose, check and create the run's directory (OutputDirError, one line, when it cannot be used)."""
    try:
        return _prepare(output, overwrite=overwrite, now=now, notice=notice)
    except OutputDirError:
        raise
    except OSError as exc:  # e.g. a parent directory that cannot even be looked into
        raise OutputDirError(f"cannot use --output {output}: {_why(exc)}") from None


def _prepare(output: Path | None, *, overwrite: bool, now: dt.datetime | None,
             notice: Callable[[str], None]) -> RunDir:
    if output is None:
        try:
            run_dir = _fresh_default(DEFAULT_ROOT, now or dt.datetime.now())
        except OSError as exc:
            raise OutputDirError(f"cannot create a run directory under {DEFAULT_ROOT}: {_why(exc)}") from None
    else:
        refuse_current_dir(output)
        if output.exists() and not output.is_dir():
            raise OutputDirError(f"--output {output} exists and is not a directory")
        if output.is_dir():
            _clear_earlier_run(output, overwrite=overwrite, notice=notice)
            run_dir = RunDir(output, None)
        else:
            try:
                run_dir = RunDir(output, make_dirs(output))
            except OSError as exc:
                raise OutputDirError(f"cannot create --output {output}: {_why(exc)}") from None
    try:
        check_writable(run_dir.path)
    except OSError as exc:
        discard(run_dir)
        raise OutputDirError(f"cannot write in --output {run_dir.path}: {_why(exc)}") from None
    return run_dir


def discard(run_dir: RunDir) -> None:
    """Undo a run that sent nothing: remove the files it wrote and, if it created them, its directories
    (only while empty: anything else found there is left alone)."""
    for name in run_files():
        target = run_dir.path / name
        if target.is_file() or target.is_symlink():
            target.unlink(missing_ok=True)
    remove_created_dirs(run_dir)


def remove_created_dirs(run_dir: RunDir) -> None:
    """Remove the directories `run_dir` created, innermost first, each only while empty."""
    if run_dir.created_root is None:
        return
    directory = run_dir.path
    while True:
        try:
            directory.rmdir()
        except OSError:
            return
        if directory == run_dir.created_root or directory.parent == directory:
            return
        directory = directory.parent
