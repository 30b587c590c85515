"""The `goodput` command line with every command registered (`app`, for tests and tools that want the whole
Typer application). The console entry point is `loadgen.cli.main`, which handles signals before anything
heavy is imported and loads only the command being run (`loadgen.cli.commands`). Exit codes: 0 ok,
1 runtime error, 2 usage error (one line on stderr, nothing sent), 99 thresholds failed, 130 interrupted
(outputs still written, `complete: false`)."""

from __future__ import annotations

from loadgen.cli.commands import build_app, run_app

app = build_app()


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; usage errors become one line on stderr and code 2."""
    return run_app(app, argv)
