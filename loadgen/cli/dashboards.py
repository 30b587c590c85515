"""`goodput dashboards export DIR`: write the Grafana dashboards, Prometheus rules and provisioning files."""

from __future__ import annotations

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
    from exporters.grafana.export import export as write_bundle
    from exporters.prometheus.rules import check_objective

    try:
        check_objective(objective)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--objective") from None
    for path in write_bundle(directory, objective):
        print(path)
    return 0
