"""`goodput dashboards export DIR`: write the Grafana dashboards, Prometheus rules and provisioning files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

dashboards_app = typer.Typer(
    name="dashboards",
    help="Grafana dashboards, Prometheus recording/alert rules and provisioning examples.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@dashboards_app.callback()
def dashboards() -> None:
    """Grafana dashboards, Prometheus recording/alert rules and provisioning examples."""


@dashboards_app.command("export")
def export(
    directory: Annotated[Path, typer.Argument(help="Where to write grafana/, prometheus/ and provisioning/.")],
    objective: Annotated[float, typer.Option(help="SLO attainment objective of the burn-rate alerts (e.g. 0.99).")] = 0.99,
) -> int:
    """Write the dashboards, rules (with promtool unit tests) and provisioning examples to DIRECTORY.

    Example: goodput dashboards export ./goodput-dashboards --objective 0.995
    """
    from exporters.grafana import export as write_bundle
    from exporters.prometheus import check_objective

    try:
        check_objective(objective)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--objective") from None
    problem = unusable_directory(directory)
    if problem is not None:
        raise typer.BadParameter(problem, param_hint="DIRECTORY")
    try:
        written = write_bundle(directory, objective)
    except OSError as exc:  # a disk that fills up, a file removed under us, ...
        typer.echo(f"goodput dashboards export: error: could not write {exc.filename or directory}: "
                   f"{exc.strerror or exc}", err=True)
        raise typer.Exit(1) from None
    for path in written:
        print(path)
    return 0


def unusable_directory(directory: Path) -> str | None:
    """Why `directory` cannot receive the bundle (one line), or None once it exists and is writable: it is
    created here, parents included, as the export would."""
    existing = directory
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a directory"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create {directory}: {exc.strerror or exc}"
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"cannot write in {directory}: permission denied"
    return None
