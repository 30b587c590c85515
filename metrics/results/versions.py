"""The schema version of each result document, and the one check of a version read back.

A document carries its version as `schema_version`. The version rises when a reader of the previous
one would misread the new one; what each version changed is noted beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json

RUN_SCHEMA_VERSION = 2  # 1: `settings`; 2: `spec` (loadgen.spec) and `resolved`
SUMMARY_SCHEMA_VERSION = 2  # 2: `requests.sent` counts only requests that were sent; `records` counts them all
SWEEP_SCHEMA_VERSION = 1
CAPACITY_SCHEMA_VERSION = 1


def check_not_newer(data: Mapping[str, Json], name: str, known: int) -> None:
    """ValueError (one line) when `data` has no integer schema_version or one newer than `known`."""
    version = data.get("schema_version")
    if not isinstance(version, int) or version > known:
        raise ValueError(f"{name} schema {version!r} is newer than this goodput understands")
