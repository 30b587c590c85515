"""`--server-arg` for the embedded reference server, checked before anything starts.

The arguments are parsed by the reference server's own command line (`refserver.cli.serve`) without
running it: an unknown option or a value of the wrong type is a usage error of `goodput run` (one line
naming the argument, exit 2), not the child's usage text naming `python -m refserver`. What only the
server itself can judge (an engine name, a model directory) is refused by the child at start-up, and
`loadgen.run.embedded` turns that into one line too.
"""

from __future__ import annotations

from collections.abc import Sequence

SERVE_HELP = "see goodput serve --help"


def check_server_args(args: Sequence[str]) -> None:
    """ValueError (a usage error, one line) when the reference server's command line refuses `args`."""
    if not args:
        return
    import typer
    from typer.main import get_command

    from refserver import serve

    try:  # recent Typer vendors its own copy of Click; its exceptions are not click's
        from typer._click.exceptions import ClickException, NoSuchOption
    except ImportError:  # pragma: no cover - older Typer on top of Click
        from click import ClickException, NoSuchOption  # type: ignore[assignment]

    if "--help" in args:  # an eager option that prints and stops: no argument to start a server with
        raise ValueError(f"--server-arg: --help is not an argument to start the server with; {SERVE_HELP}")
    app = typer.Typer(add_completion=False, rich_markup_mode=None)
    app.command()(serve)
    try:
        get_command(app).make_context("goodput serve", list(args))  # parses and converts; runs nothing
    except NoSuchOption as exc:  # Click's guesses at a near name are often far off (--bogus: --host)
        raise ValueError(f"--server-arg: the reference server has no option {exc.option_name}; {SERVE_HELP}") from None
    except ClickException as exc:
        raise ValueError(f"--server-arg: {exc.format_message().rstrip('.')}; {SERVE_HELP}") from None
