"""What a run has got so far, and the exit codes its end may give (loadgen.run.conclusion decides which).

Imported before the first request is sent: kept apart from the conclusion's result-file machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loadgen.dispatch import RecordWriter, RunState
    from metrics.results import RunFile
    from metrics.server import ServerPrometheusJSON

EXIT_RUNTIME_ERROR = 1
EXIT_USAGE = 2  # as click's for a bad option: the run's input cannot work against this server
EXIT_INTERRUPTED = 130


@dataclass(slots=True)
class RunSoFar:
    """What a run has got so far: the error paths read it to tell whether anything was sent."""

    run_info: RunFile | None = None  # run.json as last written: set before the first request
    writer: RecordWriter | None = None
    state: RunState | None = None  # set just before dispatching begins
    server_prom: ServerPrometheusJSON | None = None
    output_errors: list[OSError] = field(default_factory=list)  # result files that could not be written

    def info(self) -> RunFile:
        """run.json as last written (it is written before anything is sent)."""
        assert self.run_info is not None, "run.json is written before the first request"
        return self.run_info


def describe_os_error(exc: OSError) -> str:
    """'PATH: reason' for a failed file operation, without Python's '[Errno N]' decoration."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason
