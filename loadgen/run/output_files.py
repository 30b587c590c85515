"""Files written outside a run's directory at its end (--junit, --markdown): checked before anything is sent.

The check does what the write will do, without leaving anything behind: the path must not be a directory,
the nearest directory that exists on its way must be a directory (not a file), and a probe file must be
creatable there (the parents that do not exist yet are created by the write). A refusal is one line
naming the option and the path (ValueError: a usage error, exit 2).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _nearest_existing(path: Path) -> Path:
    probe = path.parent
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return probe


def check_output_file(path: Path, flag: str) -> None:
    """ValueError (one line) when `path` cannot be written as a file."""
    if path.is_dir():
        raise ValueError(f"{flag} {path} is a directory; give a file path")
    if str(path) in ("", ".") or path.name in ("", ".", ".."):
        raise ValueError(f"{flag} {str(path)!r} names no file")
    where = _nearest_existing(path)
    if not where.is_dir():
        raise ValueError(f"{flag} {path}: {where} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(dir=where, prefix=".goodput-probe-")
    except OSError as exc:
        raise ValueError(f"{flag} {path}: cannot write in {where} ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def check_output_files(*, junit: Path | None, markdown: Path | None) -> None:
    for path, flag in ((junit, "--junit"), (markdown, "--markdown")):
        if path is not None:
            check_output_file(path, flag)


def failed_names(errors: list[OSError], out: Path) -> str:
    """The files that could not be written, for the error line that ends a run: those in the run's
    directory by name, the others (--junit, --markdown) by their whole path."""
    names = []
    for exc in errors:
        if not exc.filename:
            names.append("an unnamed file")
            continue
        path = Path(os.fsdecode(exc.filename))
        names.append(path.name if path.parent == out else str(path))
    return ", ".join(dict.fromkeys(names))
