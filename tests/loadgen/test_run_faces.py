"""The faces of loadgen/run, loadgen/dispatch and loadgen/workers: each exports the names used outside it in
`__all__`, imports the module behind a name only when the name is first used (`goodput run` imports each
part when it gets there), and code outside a folder imports it through its face alone."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACES = ("loadgen.run", "loadgen.dispatch", "loadgen.workers")
PACKAGES = ("loadgen", "metrics", "exporters", "refserver")


def _checked_names(package: str) -> dict[str, str]:
    """The face's `if TYPE_CHECKING:` imports: name → the module it comes from."""
    tree = ast.parse((ROOT / package.replace(".", "/") / "__init__.py").read_text())
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module is not None
                names.update((alias.name, imp.module) for alias in imp.names)
    return names


@pytest.mark.parametrize("package", FACES)
def test_every_exported_name_is_the_defining_modules_own(package: str) -> None:
    face = importlib.import_module(package)
    declared = _checked_names(package)
    assert sorted(face.__all__) == sorted(declared)
    for name, module in declared.items():
        assert getattr(face, name) is getattr(importlib.import_module(module), name), name
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        face.not_a_name  # noqa: B018


def test_a_face_imports_none_of_its_modules_until_a_name_is_used() -> None:
    probe = ("import sys, loadgen.run, loadgen.dispatch, loadgen.workers\n"
             f"print(sorted(m for m in sys.modules if m.startswith({FACES!r})))\n"
             "from loadgen.run import plan_run\n"
             "print('loadgen.run.setup' in sys.modules, 'loadgen.run.outputs' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.stdout.splitlines() == [str(sorted(FACES)), "True False"], done.stderr


def _deep_imports(path: Path, folder: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names
                  if name.startswith(folder + ".")]
    return found


def test_code_outside_a_folder_imports_it_through_its_face() -> None:
    deep = []
    for folder in FACES:
        inside = ROOT / folder.replace(".", "/")
        for pkg in PACKAGES:
            deep += [hit for path in sorted((ROOT / pkg).rglob("*.py")) if not path.is_relative_to(inside)
                     for hit in _deep_imports(path, folder)]
    assert not deep, "import these from the folder's face: " + "; ".join(deep)
