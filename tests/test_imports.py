"""The packages import each other one way: no module imports another that imports it back (directly or through
others), and the dependency directions of docs/architecture.md hold. Imports inside functions count too (a
deferred import is still a dependency), and so do imports under `if TYPE_CHECKING:` for cycles and folder
boundaries (a module that needs its caller's interface states it as a Protocol); only the top-level package
directions leave them out (they never run).

Folder boundaries: a folder is a package directory (a package's own top-level modules are its folder); which
folder may import which is the table "folder | may import" in docs/architecture.md, kept equal to the code both
ways, and no folder imports another that imports it back."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("loadgen", "metrics", "exporters", "refserver")
# Which top-level package may import which (besides itself).
ALLOWED = {
    "metrics": set(),
    "exporters": {"metrics"},
    "refserver": {"metrics"},
    "loadgen": {"metrics", "exporters", "refserver"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, modules: set[str], type_checking: bool) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in modules else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in found if name in modules}


def import_graph(*, type_checking: bool = True) -> dict[str, set[str]]:
    """Module → the modules it imports; with `type_checking=False`, without those under `if TYPE_CHECKING:`."""
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    modules = {_module_name(p): p for p in files}
    return {name: _imports(ast.parse(path.read_text()), set(modules), type_checking) - {name}
            for name, path in modules.items()}


def folder_of(module: str) -> str:
    """The folder a module belongs to: a package is its own folder, a plain module its package's."""
    return module if ROOT.joinpath(*module.split(".")).is_dir() else module.rpartition(".")[0]


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = folder_of(module)
        out.setdefault(here, set()).update(folder_of(t) for t in targets)
        out[here].discard(here)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return out


DOC = ROOT / "docs" / "architecture.md"
_NAME = re.compile(r"`([a-z_][a-z0-9_.]*)`")


def documented_folders(text: str) -> dict[str, set[str]]:
    """The table "folder | may import": each row's folder → the folders it may import."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"\|\s*folder\s*\|\s*may import\s*\|", line))
    table: dict[str, set[str]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        folder, allowed = line.strip().strip("|").split("|")
        names = _NAME.findall(folder)
        assert len(names) == 1, f"a row of the folder table names one folder: {line}"
        assert names[0] not in table, f"the folder table lists {names[0]} twice"
        table[names[0]] = set(_NAME.findall(allowed))
    return table


def test_no_module_imports_another_that_imports_it_back() -> None:
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles: " + "; ".join(" ↔ ".join(c) for c in cycles)


def test_every_folder_imports_only_what_the_architecture_table_allows() -> None:
    actual = folder_graph(import_graph())
    table = documented_folders(DOC.read_text())
    assert sorted(actual) == sorted(table), ("docs/architecture.md's folder table and the folders differ: "
                                             f"missing {sorted(set(actual) - set(table))}, "
                                             f"not folders {sorted(set(table) - set(actual))}")
    wrong = sorted(f"{a} → {b}" for a, targets in actual.items() for b in targets - table[a])
    assert not wrong, "imports the folder table does not allow: " + ", ".join(wrong)
    unused = sorted(f"{a} → {b}" for a, allowed in table.items() for b in allowed - actual[a])
    assert not unused, "the folder table allows imports no module makes (remove them): " + ", ".join(unused)


def test_no_folder_imports_another_that_imports_it_back() -> None:
    cycles = _cycles(folder_graph(import_graph()))
    assert not cycles, "folder cycles: " + "; ".join(" ↔ ".join(c) for c in cycles)


def test_packages_depend_in_the_documented_directions() -> None:
    wrong = sorted(f"{a} → {b}" for a, targets in import_graph(type_checking=False).items() for b in targets
                   if b.split(".")[0] != a.split(".")[0] and b.split(".")[0] not in ALLOWED[a.split(".")[0]])
    assert not wrong, "imports against the documented direction: " + ", ".join(wrong)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The results contract (metrics/results, docs/architecture.md "Results contract"): below both the load
# generator and the exporters, light (the standard library only: a run imports it before its first request).
RESULTS = "metrics.results"
RESULTS_DIR = ROOT / "metrics" / "results"


def _in_results(module: str) -> bool:
    return module == RESULTS or module.startswith(RESULTS + ".")


def test_the_results_contract_imports_only_itself_and_the_standard_library() -> None:
    import sys

    graph = import_graph()
    inner = sorted(f"{a} → {b}" for a in graph if _in_results(a) for b in graph[a] if not _in_results(b))
    assert not inner, "metrics.results imports outside itself: " + ", ".join(inner)
    outside = sorted(f"{path.name}: {name}" for path in RESULTS_DIR.glob("*.py")
                     for name in _top_level_imports(ast.parse(path.read_text()))
                     if name not in sys.stdlib_module_names and name != "metrics")
    assert not outside, "metrics.results imports beyond the standard library: " + ", ".join(outside)


def _top_level_imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _layout_names() -> dict[str, str]:
    """The contract's file names: constant name → file name (metrics/results/layout.py)."""
    from metrics.results import layout

    return {k: v for k, v in vars(layout).items() if k.isupper() and isinstance(v, str)}


DOCUMENTS = ("RUN_FILE", "SUMMARY_FILE", "SWEEP_FILE", "CAPACITY_FILE")
READS_OR_WRITES = {"load", "loads", "read_text", "read_bytes", "open", "write_json", "write_atomic", "write_text",
                   "write_bytes"}


def _mentions(node: ast.AST, names: set[str]) -> bool:
    return any((isinstance(n, ast.Name) and n.id in names) or (isinstance(n, ast.Attribute) and n.attr in names)
               for n in ast.walk(node))


def _call_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def contract_violations(tree: ast.AST, files: dict[str, str]) -> list[tuple[int, str]]:
    """Where a module outside metrics/results names a result file itself (a string equal to one of the
    contract's file names; `points` where it makes a path), or reads or writes run.json, summary.json,
    sweep.json or capacity.json itself (json.load(s), read_text, open, write_json, ... on an expression built
    from the contract's name for it, directly or through a variable assigned from one)."""
    names = set(files.values()) - {files["POINTS_DIR"]}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in names:
            found.append((node.lineno, f"names {node.value!r} itself"))
        elif any(isinstance(part, ast.Constant) and part.value == files["POINTS_DIR"] for part in _path_parts(node)):
            found.append((node.lineno, f"makes a path of {files['POINTS_DIR']!r} itself"))
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        paths = set(DOCUMENTS)  # names of a document's path: the contract's constant, a variable made from one
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and _is_path(node.value, paths):
                paths.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(scope):
            if isinstance(node, ast.Call) and _call_name(node) in READS_OR_WRITES and any(
                    _is_path(part, paths) for part in [*node.args, getattr(node.func, "value", None)] if part):
                found.append((node.lineno, f"{_call_name(node)}() on a result document itself"))
    return sorted(set(found))


def _path_parts(node: ast.AST) -> list[ast.AST]:
    """The operands of `a / b` and the arguments of `Path(...)`: the parts a path is made of."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return [node.left, node.right]
    return list(node.args) if isinstance(node, ast.Call) and _call_name(node) == "Path" else []


def _is_path(node: ast.AST, paths: set[str]) -> bool:
    """`DIR / SUMMARY_FILE`, `SUMMARY_FILE` or a variable holding such a path (`str(...)` around it too)."""
    if isinstance(node, ast.Call) and _call_name(node) == "str" and node.args:
        return _is_path(node.args[0], paths)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _is_path(node.right, paths) or _is_path(node.left, paths)
    return (isinstance(node, ast.Name) and node.id in paths) or (isinstance(node, ast.Attribute) and node.attr in paths)


def test_only_the_results_contract_names_result_files_and_opens_result_documents() -> None:
    files = _layout_names()
    wrong = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.is_relative_to(RESULTS_DIR):
                continue
            for line, what in contract_violations(ast.parse(path.read_text()), files):
                wrong.append(f"{path.relative_to(ROOT)}:{line} {what}")
    assert not wrong, "use metrics.results instead: " + "; ".join(wrong)


def test_the_contract_check_finds_what_it_forbids() -> None:
    files = _layout_names()
    source = '''
SUMMARY = "summary.json"
probe = Path("points") / "check"
def read(d):
    path = d / RUN_FILE
    return json.loads(path.read_text())
def write(d, doc):
    write_json(d / SWEEP_FILE, doc)
def fine(d):
    return (d / CAPACITY_FILE).is_file(), {"points": 3}, "see summary.json"
'''
    assert sorted({line for line, _ in contract_violations(ast.parse(source), files)}) == [2, 3, 6, 8]


def test_the_folder_table_reader_reads_rows() -> None:
    text = "x\n\n| folder | may import |\n| --- | --- |\n| `a.b` | `a`, `c.d` |\n| `a` | — |\n\nafter\n"
    assert documented_folders(text) == {"a.b": {"a", "c.d"}, "a": set()}
    assert folder_of("loadgen.http.client") == "loadgen.http" and folder_of("loadgen.http") == "loadgen.http"
