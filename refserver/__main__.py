"""`python -m refserver [OPTIONS]`: the same server as `goodput serve` (used to start it as a subprocess)."""

from __future__ import annotations

import typer

from refserver.cli import serve


def main() -> None:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command()(serve)
    app(prog_name="python -m refserver")


if __name__ == "__main__":
    main()
