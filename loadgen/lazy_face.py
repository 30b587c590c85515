"""A package face that imports on first use (PEP 562): the package lists its public names in `__all__` and
the module each lives in, and that module is imported only when one of its names is first asked for.

`goodput run` imports what it needs when it needs it (its start-up to the first request is measured,
bench/run_path.py): a face that imported its whole folder to hand out one name would undo that. Type
checkers read the same names from the face's `if TYPE_CHECKING:` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], object]:
    """The package's module `__getattr__`: `name` → the attribute of the same name of module
    `package.where[name]`, imported on the first ask and then kept in the package's namespace."""

    def lookup(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return lookup
