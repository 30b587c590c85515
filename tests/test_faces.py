"""Faces (docs/architecture.md, "Faces"): a package's `__init__.py` lists in `__all__` the names code outside the
package may use, and code outside a package imports from its face only: never `pkg.sub.module` (nor the module
itself as `from pkg.sub import module`, unless the face lists that module as a namespace) from a module that
is not inside `pkg.sub`. Code inside a package imports its siblings directly. Every import counts: at the top
of a module, inside a function, under `if TYPE_CHECKING:`.

Each face is checked too: its `__all__` is exactly the names it binds (a lazy face: exactly the names of its
`if TYPE_CHECKING:` imports, and its `lazy_names` table agrees with them name for name), and every name in it
resolves, through the face, to the object its module defines, also once every module it names is imported
(a lazy face cannot hand out a function with the name of one of its modules: the module would win)."""

from __future__ import annotations

import ast
import functools
import importlib
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("loadgen", "metrics", "exporters", "refserver")

# Imports that are a face's machinery, not names it exports.
MACHINERY = {"__future__", "typing", "metrics"}


@dataclass
class Face:
    """What a package's `__init__.py` says: `__all__`, the names its imports bind (name → (module, attribute);
    attribute None: the module itself), which of those are under `if TYPE_CHECKING:`, and a lazy face's
    table (name → "module" or "module:attribute")."""

    all: list[str] | None = None
    bound: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    type_checking: set[str] = field(default_factory=set)
    lazy: dict[str, str] | None = None


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources(root: Path = ROOT) -> dict[str, str]:
    """Every module of the packages: name → source. A package is named by its `__init__.py`."""
    return {module_name(p, root): p.read_text() for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))}


@functools.cache
def parse(source: str) -> ast.Module:
    return ast.parse(source)


def packages_of(modules: dict[str, str], root: Path = ROOT) -> set[str]:
    return {name for name in modules if (root.joinpath(*name.split(".")) / "__init__.py").is_file()}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def read_face(source: str, package: str, modules: set[str]) -> Face:
    face = Face()
    tree = parse(source)

    def bind(node: ast.ImportFrom, under_type_checking: bool) -> None:
        if node.level or node.module is None or node.module.split(".")[0] in {"__future__", "typing"}:
            return
        if node.module == "metrics" and package != "metrics":
            return
        for alias in node.names:
            name = alias.asname or alias.name
            submodule = f"{node.module}.{alias.name}"
            face.bound[name] = (submodule, None) if submodule in modules else (node.module, alias.name)
            if under_type_checking:
                face.type_checking.add(name)

    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            bind(node, False)
        elif isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                if isinstance(child, ast.ImportFrom):
                    bind(child, True)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target == "__all__":
                face.all = list(ast.literal_eval(node.value))
            elif target == "__getattr__" and isinstance(node.value, ast.Call):
                face.lazy = ast.literal_eval(node.value.args[1])
    return face


def faces(modules: dict[str, str], packages: set[str]) -> dict[str, Face]:
    """The packages whose `__init__.py` has an `__all__`."""
    out = {pkg: read_face(modules[pkg], pkg, set(modules)) for pkg in packages}
    return {pkg: face for pkg, face in out.items() if face.all is not None}


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def deep_imports(modules: dict[str, str], packages: set[str]) -> list[str]:
    """Each import, by a module outside a package, of one of that package's modules (not its face): as
    `module:line → imported module`."""
    exported = {pkg: set(face.all or ()) for pkg, face in faces(modules, packages).items()}
    found: list[str] = []
    for name, source in modules.items():
        folder = name if name in packages else name.rpartition(".")[0]
        for node in ast.walk(parse(source)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
                if node.module in packages:  # `from pkg import module`: a module unless the face lists it
                    targets = [f"{node.module}.{alias.name}" for alias in node.names
                               if alias.name not in exported.get(node.module, set())]
            for target in targets:
                if target not in modules or target in packages:
                    continue  # not one of ours, or a face
                home = target.rpartition(".")[0]
                if not _inside(folder, home):
                    found.append(f"{name}:{node.lineno} → {target}")
    return sorted(found)


def unknown_names(modules: dict[str, str], packages: set[str]) -> list[str]:
    """Names imported from a face by code outside its package that the face does not list in `__all__`
    (a type checker lets them through: a lazy face's `__getattr__` answers any name)."""
    listed = faces(modules, packages)
    found: list[str] = []
    for name, source in modules.items():
        for node in ast.walk(parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in listed \
                    and not _inside(name, node.module):
                face = listed[node.module]
                found.extend(f"{name}:{node.lineno} → {node.module}.{alias.name}" for alias in node.names
                             if alias.name not in (face.all or ()) and f"{node.module}.{alias.name}" not in modules)
    return sorted(found)


def test_code_outside_a_package_imports_from_its_face_only() -> None:
    modules = sources()
    deep = deep_imports(modules, packages_of(modules))
    assert not deep, ("import these from the package's face (its __init__.py; add the name to its __all__): "
                      + "; ".join(deep))


def test_names_imported_from_a_face_are_in_its_all() -> None:
    modules = sources()
    wrong = unknown_names(modules, packages_of(modules))
    assert not wrong, "not in the face's __all__: " + "; ".join(wrong)


def test_every_package_used_from_outside_has_a_face() -> None:
    modules = sources()
    packages = packages_of(modules)
    listed = faces(modules, packages)
    used = {node.module for name, source in modules.items() for node in ast.walk(parse(source))
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in packages
            and not _inside(name, node.module)}
    assert sorted(used - set(listed)) == []


def test_each_face_lists_exactly_what_it_binds() -> None:
    modules = sources()
    wrong: list[str] = []
    for pkg, face in sorted(faces(modules, packages_of(modules)).items()):
        names = face.all or []
        if len(names) != len(set(names)):
            wrong.append(f"{pkg}: __all__ lists a name twice")
        submodules = {n for n, (module, attr) in face.bound.items() if attr is None}
        exported = (set(face.bound) - submodules) | (submodules & set(names))
        if set(names) != exported:
            wrong.append(f"{pkg}: __all__ lacks {sorted(exported - set(names))}, "
                         f"lists unbound {sorted(set(names) - exported)}")
        if face.lazy is not None:
            table = {n: f"{module.removeprefix(pkg + '.')}" + ("" if attr == n else f":{attr}")
                     for n, (module, attr) in face.bound.items() if n in face.type_checking}
            if face.lazy != table:
                wrong.append(f"{pkg}: the lazy_names table and the TYPE_CHECKING imports differ: "
                             f"{sorted(set(face.lazy.items()) ^ set(table.items()))}")
    assert not wrong, "; ".join(wrong)


def test_every_name_of_a_face_resolves_to_its_modules_object() -> None:
    modules = sources()
    wrong: list[str] = []
    for pkg, face in sorted(faces(modules, packages_of(modules)).items()):
        package = importlib.import_module(pkg)
        for name in face.all or []:
            module, attr = face.bound[name]
            if f"{pkg}.{name}" in modules:  # a module of that name, loaded: the face must still answer its name
                importlib.import_module(f"{pkg}.{name}")
            home = importlib.import_module(module)
            expected = home if attr is None else getattr(home, attr)
            if getattr(package, name) is not expected:
                wrong.append(f"{pkg}.{name} is not {module}" + ("" if attr is None else f".{attr}"))
    assert not wrong, "; ".join(wrong)


def test_a_lazy_face_imports_none_of_its_modules() -> None:
    """Importing every lazy face loads no module of the packages but the faces, metrics.lazy_face and the
    modules of what a face re-exports at once from another package's face: a name's module is imported when
    the name is first used (goodput run's start-up stays what it was)."""
    modules = sources()
    packages = packages_of(modules)
    listed = faces(modules, packages)
    lazy = sorted(pkg for pkg, face in listed.items() if face.lazy is not None)
    allowed = {"metrics.lazy_face"} | {
        f"{module}.{(listed[module].lazy or {})[attr].partition(':')[0]}" for pkg in lazy
        for name, (module, attr) in listed[pkg].bound.items()
        if name not in listed[pkg].type_checking and attr is not None and module in listed}
    code = (f"import importlib, sys\nfor p in {lazy!r}: importlib.import_module(p)\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {PACKAGES!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(ast.literal_eval(out.stdout))
    assert sorted(loaded - packages - allowed) == []


def test_the_checks_find_what_they_forbid() -> None:
    modules = {
        "p": "", "p.a": "", "p.a.m": "def f(): pass\n", "p.a.n": "from p.a.m import f\n",  # a sibling: fine
        "p.b": '"""face"""\n__all__ = ["g"]\nfrom p.b.k import g\n', "p.b.k": "g = 1\n",
        "p.c": "", "p.c.x": ("from p.a.m import f\nimport p.a.m\nfrom p.b import k\nfrom p.b import g\n"
                             "def h():\n    from p.b.k import g\n    from p.b import nope\n"),
    }
    packages = {"p", "p.a", "p.b", "p.c"}
    assert deep_imports(modules, packages) == ["p.c.x:1 → p.a.m", "p.c.x:2 → p.a.m", "p.c.x:3 → p.b.k",
                                               "p.c.x:6 → p.b.k"]
    assert unknown_names(modules, packages) == ["p.c.x:7 → p.b.nope"]
    face = read_face('from typing import TYPE_CHECKING\nfrom metrics import lazy_names\nif TYPE_CHECKING:\n'
                     '    from q.m import a, b as c\n__all__ = ["a", "c"]\n'
                     '__getattr__ = lazy_names(__name__, {"a": "m", "c": "m:b"})\n', "q", {"q", "q.m"})
    assert face.all == ["a", "c"] and face.lazy == {"a": "m", "c": "m:b"} and face.type_checking == {"a", "c"}
    assert face.bound == {"a": ("q.m", "a"), "c": ("q.m", "b")}
