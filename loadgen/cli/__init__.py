"""The `goodput` console entry point: install the interrupt handling, then load and run the CLI.

Deliberately light: SIGINT and SIGTERM are handled from the first statement of `main`, before the
command line's modules (Typer, httpx, numpy, ...) are imported, so a signal at any moment of start-up
ends the process with exit code 130 and one line, never with a traceback or death by the signal.
The commands themselves are assembled in `loadgen.cli.app`.

Exit codes: 0 ok, 1 runtime error, 2 usage error (one line on stderr, nothing sent), 99 thresholds
failed, 130 interrupted (outputs still written, `complete: false`).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import NoReturn

EXIT_INTERRUPTED = 130


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM ends the process the way Ctrl-C does: a KeyboardInterrupt, handled where it lands."""
    raise KeyboardInterrupt


def install_interrupt_handlers() -> None:
    """SIGTERM raises KeyboardInterrupt, like SIGINT already does (Python's default). A signal the parent
    process chose to ignore stays ignored."""
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (see `loadgen.cli.app.run_cli`)."""
    from loadgen.cli.app import run_cli as run

    return run(argv)


def main() -> NoReturn:
    install_interrupt_handlers()
    try:
        code = run_cli()
    except KeyboardInterrupt:  # during the imports above, or anywhere a command did not catch it
        print("goodput: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    sys.exit(code)
