"""`OptionValues`' fields (loadgen.spec.values), made from the option declarations (loadgen.spec.options):
one field per option, in their order, of the type its kind gives. A test keeps values.py equal to it, and
`python -m loadgen.spec.field_block loadgen/spec/values.py` rewrites the block after an option changes, so an
option is still declared in one place."""

from __future__ import annotations

import sys
from pathlib import Path

from loadgen.spec.options import OPTIONS, Option

BEGIN = "    # fields: generated from loadgen/spec/options.py (python -m loadgen.spec.field_block)"
END = "    # /fields"


def field_type(option: Option) -> str:
    """A field's annotation: str, int, float or bool as such, a path as its text, a repeatable option as a
    tuple, `| None` where the option's default is None."""
    if option.kind == "list":
        return "tuple[ThresholdEntry, ...]" if option.param == "threshold" else "tuple[str, ...]"
    base = "str" if option.kind == "path" else option.kind
    return base + (" | None" if option.default is None else "")


def field_block() -> str:
    """The generated part of OptionValues, its two marker lines included."""
    return "\n".join([BEGIN, *(f"    {o.param}: {field_type(o)}" for o in OPTIONS), END])


def replace_block(source: str) -> str:
    """`source` with its generated block replaced by today's; ValueError when the markers are missing."""
    start, end = source.find(BEGIN), source.find(END)
    if start < 0 or end < start:
        raise ValueError("no generated field block in the source")
    return source[:start] + field_block() + source[end + len(END):]


if __name__ == "__main__":  # python -m loadgen.spec.field_block loadgen/spec/values.py
    path = Path(sys.argv[1])
    path.write_text(replace_block(path.read_text()))
