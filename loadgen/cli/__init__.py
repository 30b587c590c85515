"""The `goodput` console entry point: install the interrupt handling, then load and run the CLI.

Deliberately light: SIGINT and SIGTERM are handled from the first statement of `main`, before the
command line's modules (Typer, httpx, numpy, ...) are imported, so a signal at any moment of start-up
ends the process with exit code 130 and one line, never with a traceback or death by the signal.
One rule for the whole process (docs/architecture.md, Signals): goodput installs its own handlers for
both, also when its parent started it with SIGINT ignored (a background job of a non-interactive shell):
a signal sent to goodput on purpose (`kill -INT`, a CI runner's cancel) always stops it the same way.
The commands themselves are assembled in `loadgen.cli.commands`, which imports only the one being run.

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
    """SIGINT and SIGTERM both raise KeyboardInterrupt, whatever the parent left them at. Python does not
    install its SIGINT handler when the process starts with SIGINT ignored, and the run loop takes both
    signals over anyway (loadgen.run.session): keeping an inherited ignore until then would make
    start-up, and only start-up, deaf to them."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (see `loadgen.cli.commands.run_cli`)."""
    from loadgen.cli.commands import run_cli as run

    return run(argv)


def keep_optional_modules_out() -> None:
    """httpx imports its own command line (`httpx._main`: rich, click, pygments; ~60-80 ms of start-up)
    when it can; goodput never calls it, and httpx runs without it when it cannot be imported."""
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "not importable"


def main() -> NoReturn:
    install_interrupt_handlers()
    keep_optional_modules_out()
    try:
        code = run_cli()
    except KeyboardInterrupt:  # during the imports above, or anywhere a command did not catch it
        print("goodput: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    sys.exit(code)
