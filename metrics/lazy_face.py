"""A package face that imports on first use (PEP 562).

A face is a package's `__init__.py`: the names the code outside the package may use, listed in `__all__`
(docs/architecture.md, "Faces"). A lazy face also says which module each name lives in, and that module is
imported only when one of its names is first asked for: `goodput run` imports what it needs when it needs
it (its start-up to the first request is measured, bench/run_path.py), and a face that imported its whole
folder to hand out one name would undo that. Type checkers read the same names from the face's
`if TYPE_CHECKING:` imports; tests/test_faces.py keeps the two lists and `__all__` equal.

The standard library only: every package's face may use it (metrics is below all of them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], object]:
    """The package's module `__getattr__`: `name` → the attribute of that name of module
    `package.where[name]` (`"module:attribute"` when the face gives it another name).

    Nothing is cached on the package: every ask reads the module's attribute (a dictionary lookup, the
    module being in `sys.modules` after the first), so a test that replaces a name in its module is seen
    through the face as well."""

    def lookup(name: str) -> object:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        return getattr(importlib.import_module(f"{package}.{module}"), attribute or name)

    return lookup
