"""An SLO is parsed from text once, where the text enters, and is an `SLO` everywhere after
(docs/architecture.md, "Where values are parsed"): `parse_slo` is called only by the edges listed here, and
no signature takes "an SLO or its text"."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("loadgen", "metrics", "exporters", "refserver")

# (file, function) → the text it parses
EDGES = {
    ("loadgen/spec/codecs.py", "_slo"): "goodput run's --slo / slo: (the run spec, its slo codec)",
    ("loadgen/cli/report.py", "report"): "goodput report --slo",
    ("loadgen/cli/gate.py", "gate"): "goodput gate --slo (on top of the gate config file's)",
    ("loadgen/cli/gate.py", "compare"): "goodput compare --slo",
    ("metrics/gate/config.py", "_slo"): "the gate config file's slo:",
    ("loadgen/run/outputs.py", "stored_slo"): "the SLO items stored in a run directory, read back",
}


@cache
def _sources() -> list[tuple[str, ast.Module]]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            out.append((path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), filename=str(path))))
    return out


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _innermost_caller(tree: ast.Module, call: ast.Call) -> str:
    best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for fn in _functions(tree):
        end = fn.end_lineno or fn.lineno
        if fn.lineno <= call.lineno <= end and (best is None or fn.lineno >= best.lineno):
            best = fn
    return best.name if best is not None else "<module>"


def _calls_parse_slo(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "parse_slo") or (isinstance(f, ast.Attribute) and f.attr == "parse_slo")


def test_parse_slo_is_called_only_at_the_edges() -> None:
    found = set()
    for name, tree in _sources():
        for node in ast.walk(tree):
            if _calls_parse_slo(node):
                assert isinstance(node, ast.Call)
                found.add((name, _innermost_caller(tree, node)))
    assert found - set(EDGES) == set(), "parse_slo called past an edge: take an SLO instead"
    assert set(EDGES) - found == set(), "an edge listed here no longer parses an SLO: update EDGES"


def _annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg]
    return [a.annotation for a in args if a is not None and a.annotation is not None] + (
        [fn.returns] if fn.returns is not None else [])


def _union_members(node: ast.expr) -> list[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    return [ast.unparse(node)]


def test_no_signature_takes_an_slo_or_its_text() -> None:
    offenders = []
    for name, tree in _sources():
        for fn in _functions(tree):
            for annotation in _annotations(fn):
                members = _union_members(annotation)
                if "SLO" in members and any("str" in m for m in members):
                    offenders.append(f"{name}:{fn.lineno} {fn.name}: {ast.unparse(annotation)}")
    assert offenders == []
