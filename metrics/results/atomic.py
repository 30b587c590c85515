"""Atomic writes of result files: a temporary file beside the target, then a rename, so a reader never sees
half a file and an interrupted write leaves the old one.

Files get the mode the user's umask gives (0644 with the usual 022), like records.jsonl and
metrics.prom: the temporary file is created with 0666 and the kernel applies the umask (mkstemp would
make it 0600). A failed write raises OSError naming the file it was writing, never the temporary one.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def create_temp(path: Path) -> tuple[int, Path]:
    """A new file beside `path` (same filesystem, so the rename is atomic), mode 0666 minus the umask."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def named_error(path: Path, exc: OSError) -> OSError:
    """The same error (same errno, so the same OSError subclass), naming the file the caller asked for."""
    if exc.errno:
        return OSError(exc.errno, exc.strerror or str(exc), str(path))
    named = OSError(str(exc))
    named.filename = str(path)
    return named


def write_atomic(path: Path, data: bytes) -> None:
    try:
        fd, tmp = create_temp(path)
    except OSError as exc:
        raise named_error(path, exc) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise named_error(path, exc) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode())
