"""What a session workload that changes another's sessions shares with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loadgen.workload.bust import CacheBuster
from loadgen.workload.text import TokenCounter


@dataclass(slots=True)
class WrappedSessions:
    """A session workload that changes another's sessions (loadgen.workload.cancel.CancellingSessions,
    loadgen.workload.models.MixedSessions): the other's token counter and cache buster are its own."""

    inner: Any  # a SessionWorkload

    @property
    def counter(self) -> TokenCounter:
        counter: TokenCounter = self.inner.counter
        return counter

    @property
    def buster(self) -> CacheBuster | None:
        buster: CacheBuster | None = self.inner.buster
        return buster
