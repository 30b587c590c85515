"""docs/run-config.md's table of every config-file key, made from the option declarations
(loadgen.spec.options): tests/test_docs.py keeps the page equal to it, and
`python -m loadgen.spec.key_table docs/run-config.md` rewrites the page's table after an option changes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from loadgen.spec.options import OPTIONS, PANELS, Option

BEGIN = "<!-- keys: generated from loadgen/spec/options.py -->"
END = "<!-- /keys -->"


def _default(value: Any) -> str:
    if value is None or value == []:
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _row(option: Option) -> str:
    key = "(none: a credential, from the environment)" if option.secret else f"`{option.file_key}`"
    text = option.help.replace("|", "\\|")
    return f"| {key} | `{option.flag}` | {_default(option.default)} | {text} |"


def key_table() -> str:
    """The generated part of the page, from its first marker to its last, both included."""
    lines = [BEGIN]
    for panel in PANELS:
        lines += [f"### {panel}", "", "| key | flag | default | what it sets |", "| --- | --- | --- | --- |"]
        lines += [_row(o) for o in OPTIONS if o.panel == panel]
        lines.append("")
    lines[-1] = END
    return "\n".join(lines)


def replace_table(page: str) -> str:
    """`page` with its generated table replaced by today's; ValueError when the markers are missing."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no {BEGIN} ... {END} block in the page")
    return page[:start] + key_table() + page[end + len(END):]


if __name__ == "__main__":  # python -m loadgen.spec.key_table docs/run-config.md
    path = Path(sys.argv[1])
    path.write_text(replace_table(path.read_text()))
