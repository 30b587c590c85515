"""Help texts that read at 80 columns: prose reflowed by the terminal, examples kept line for line.

Typer's rich help keeps every line break of a help text and wraps each line at the terminal's width, so a
prose line written at 110 columns breaks into a long line and a stub, and an example longer than the
terminal wraps into lines that cannot be copied. Click's `\\b` marker (keep this paragraph's lines) means
nothing to it and prints as a blank line. `fit_help` makes a help text say what its author meant:

- a paragraph whose lines are all indented, or that starts with `\\b` or a line ending in ':' followed by
  indented lines (`Examples:`), is kept line for line (the `\\b` line dropped);
- any other paragraph is one line of prose, which the terminal wraps at its width.

Examples must themselves fit: every kept line is at most EXAMPLE_WIDTH columns (test_cli_help checks
every command at COLUMNS=80).
"""

from __future__ import annotations

from typing import Any

EXAMPLE_WIDTH = 78  # 80 columns less the help panel's margin of one on each side
KEEP_LINES = "\b"


def _kept(lines: list[str]) -> bool:
    body = lines[1:] if lines[0].rstrip().endswith(":") else lines
    return bool(body) and all(line.startswith(" ") for line in body)


def fit_help(text: str | None) -> str | None:
    """The help text with prose paragraphs reflowed and example blocks kept (see the module doc)."""
    if not text:
        return text
    out = []
    for paragraph in text.strip("\n").split("\n\n"):
        lines = paragraph.split("\n")
        if lines[0].strip() == KEEP_LINES:
            lines = lines[1:]
            if lines:
                out.append("\n".join(lines))
        elif _kept(lines):
            out.append("\n".join(lines))
        else:
            out.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(p for p in out if p.strip())


def fit_app_help(app: Any) -> None:
    """fit_help on every command's and sub-app's help registered on a Typer app, recursively (a command
    without `help=` is described by its docstring, as Typer does)."""
    for command in app.registered_commands:
        source = command.help if command.help is not None else getattr(command.callback, "__doc__", None)
        command.help = fit_help(_dedent(source))
    for group in app.registered_groups:
        if group.typer_instance is not None:
            fit_app_help(group.typer_instance)
    info = getattr(app, "info", None)
    if info is not None and isinstance(info.help, str):
        info.help = fit_help(info.help)


def _dedent(text: str | None) -> str | None:
    import inspect

    return inspect.cleandoc(text) if text else text
