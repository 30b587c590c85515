"""The output directory of a sweep or a capacity search: chosen, checked and created before anything is
sent, like a run's (`loadgen.run.directory`).

- `--output DIR` that already holds a sweep or capacity search (its sweep.json / capacity.json, or run
  directories under points/) is refused unless `--overwrite`, which removes exactly those: the result
  files and the run files of each point directory (never anything else found there).
- The default is `runs/sweep-<timestamp>` or `runs/capacity-<timestamp>` (`-2`, `-3`, ... when taken).
- A sweep that ends before its first point sent anything leaves nothing behind (`discard`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path

from loadgen.run import (
    DEFAULT_ROOT,
    MAX_SUFFIX,
    OutputDirError,
    RunDir,
    check_writable,
    make_dirs,
    refuse_current_dir,
    remove_created_dirs,
    run_files,
)
from metrics.results import POINTS_DIR
from metrics.results import POINTS_RESULT_FILES as RESULT_FILES


def _point_dirs(path: Path) -> list[Path]:
    points = path / POINTS_DIR
    if not points.is_dir():
        return []
    # A symbolic link is never a point's directory (goodput makes real ones): --overwrite must not follow
    # one to remove another run's files.
    return sorted(d for d in points.iterdir()
                  if d.is_dir() and not d.is_symlink() and any((d / f).exists() for f in run_files()))


def _clear(path: Path, *, overwrite: bool) -> None:
    present = [name for name in RESULT_FILES if (path / name).exists()]
    points = _point_dirs(path)
    if not present and not points:
        return
    if not overwrite:
        what = ", ".join([*present, *([f"{len(points)} point run(s) in {POINTS_DIR}/"] if points else [])])
        raise OutputDirError(f"--output {path} already holds a sweep or capacity search ({what}); choose another "
                             "directory, pass --overwrite to replace it, or --resume it (goodput sweep)")
    try:
        for name in present:
            (path / name).unlink()
        for d in points:
            for name in run_files():
                if (d / name).is_file() or (d / name).is_symlink():
                    (d / name).unlink()
            for leftover in (d / "gate.xml", d / "gate.md"):
                leftover.unlink(missing_ok=True)
            if not any(d.iterdir()):
                d.rmdir()
    except OSError as exc:
        raise OutputDirError(f"--overwrite: cannot remove the earlier results in {path}: {exc.strerror or exc}") from None


def prepare_sweep_dir(output: Path | None, *, kind: str, overwrite: bool = False,
                      now: dt.datetime | None = None) -> RunDir:
    """Choose, check and create the directory (OutputDirError, one line, when it cannot be used)."""
    try:
        if output is not None:
            refuse_current_dir(output)
        if output is None:
            run_dir = _fresh_default(kind, now or dt.datetime.now())
        elif output.exists() and not output.is_dir():
            raise OutputDirError(f"--output {output} exists and is not a directory")
        elif output.is_dir():
            _clear(output, overwrite=overwrite)
            run_dir = RunDir(output, None)
        else:
            run_dir = RunDir(output, make_dirs(output))
        check_writable(run_dir.path)
    except OutputDirError:
        raise
    except OSError as exc:
        raise OutputDirError(f"cannot use --output {output or DEFAULT_ROOT}: {exc.strerror or exc}") from None
    return run_dir


def _fresh_default(kind: str, now: dt.datetime) -> RunDir:
    created_root = None if DEFAULT_ROOT.is_dir() else make_dirs(DEFAULT_ROOT)
    stamp = f"{kind}-{now.strftime('%Y%m%d-%H%M%S')}"
    for n in range(1, MAX_SUFFIX + 1):
        path = DEFAULT_ROOT / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return RunDir(path, created_root or path)
    raise OutputDirError(f"no free directory name under {DEFAULT_ROOT} for {stamp}")


def discard(run_dir: RunDir) -> None:
    """Undo a sweep that sent nothing: its result files, an empty points/, and the directories it created
    (only while empty; a directory that existed before is kept)."""
    for name in RESULT_FILES:
        (run_dir.path / name).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        (run_dir.path / POINTS_DIR).rmdir()
    remove_created_dirs(run_dir)
