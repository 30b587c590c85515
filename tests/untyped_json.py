"""Counting untyped JSON objects in the packages: `dict`/`Mapping` (and `Dict`, `MutableMapping`) of `str`
to `Any` or `object`, and any alias of one. Shared by the tests that hold a folder's count to its listed
edges (tests/loadgen/test_wire_typing.py, tests/metrics/test_record_typing.py) and by the package-wide
ceiling (tests/test_untyped_json.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNTYPED = re.compile(r"\b(?:dict|Dict|Mapping|MutableMapping)\[str,\s*(?:Any|object)\]")
ALIAS = re.compile(r"^\s*\w+\s*(?::\s*TypeAlias\s*)?=\s*(?:dict|Dict|Mapping|MutableMapping)\[str,\s*(?:Any|object)\]\s*$",
                   re.MULTILINE)


def files(scope: Iterable[str]) -> list[Path]:
    """The Python files of each folder or file of `scope` (relative to the repository's root)."""
    out: list[Path] = []
    for part in scope:
        path = ROOT / part
        out.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return out


def counts(scope: Iterable[str]) -> dict[str, int]:
    """Untyped JSON objects per file of `scope` (files with none left out)."""
    found: dict[str, int] = {}
    for path in files(scope):
        count = len(UNTYPED.findall(path.read_text(encoding="utf-8")))
        if count:
            found[path.relative_to(ROOT).as_posix()] = count
    return found


def aliases(scope: Iterable[str]) -> list[str]:
    """Files of `scope` that name an untyped JSON object under another name (an alias would hide it)."""
    return [path.relative_to(ROOT).as_posix() for path in files(scope) if ALIAS.search(path.read_text(encoding="utf-8"))]
