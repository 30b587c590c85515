"""What the results contract's views cost: to define, to build, to import, and `goodput report` as a whole
(not a test; run by hand, see bench/README.md, "The views' value classes").

    .venv/bin/python bench/frozen_views.py define --repeat 7
    .venv/bin/python bench/frozen_views.py build --repeat 7
    PYTHONPATH=TREE .venv/bin/python bench/frozen_views.py stats --repeat 7
    .venv/bin/python bench/frozen_views.py report RUN_DIR --tree before=TREE --tree this=. --repeat 7
    .venv/bin/python bench/frozen_views.py imports RUN_DIR --tree head=TREE --tree this=. --repeat 5

`define`: ms to define one class of Stats's shape (10 fields with defaults, two methods) as a frozen,
slotted dataclass, as a `@frozen` view and as a NamedTuple; the minimum over repeats of 20 classes each.
`build`: µs to make one Stats, the same twins, by position, by its one default-less call (`Stats(0)`) and by
keyword. `stats`: µs to make the real Stats of the tree first on the path (PYTHONPATH), from a latency
block and by position. `report`: CPU seconds (user+sys of the child, from wait4) of `goodput report RUN_DIR` run from each
tree's own sources, the trees alternated and their order rotated per pass, each on its own copy of RUN_DIR.
`imports`: the milliseconds `-X importtime` gives the views' modules (self time of every
`metrics.results` module that is not imported by a run before its first request) during that report.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import metrics
from metrics.results import STAT_KEYS

# A run imports these before its first request; the rest of metrics.results is the views.
EARLY = {"metrics.results", "metrics.results.atomic", "metrics.results.documents", "metrics.results.layout",
         "metrics.results.points", "metrics.results.versions", "metrics.results.run_write"}
# Bytecode of every tree (and of the venv) written once, apart from the trees, which are left as they are
# (with PYTHONDONTWRITEBYTECODE set, a tree without bytecode would be compiled on every run).
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "frozen-views-pycache")}
PROGRAM = "import sys; sys.path.insert(0, {tree!r}); from loadgen.cli import main; sys.exit(main())"


def stats_class(decorate: Callable[[type], type]) -> type:
    """A class of Stats's shape (metrics/results/summary_stats.py), decorated."""

    class Stats:
        count: int | None = None
        mean: float | None = None
        std: float | None = None
        min: float | None = None
        p50: float | None = None
        p90: float | None = None
        p95: float | None = None
        p99: float | None = None
        p999: float | None = None
        max: float | None = None
        extra: dict[str, int] = field(default_factory=dict)

        def values(self) -> tuple[float | None, ...]:
            return tuple(getattr(self, key) for key in STAT_KEYS)

        @property
        def has_samples(self) -> bool:
            return bool(self.count)

    return decorate(Stats)


def stats_tuple(_: Callable[[type], type]) -> type:
    class Stats(NamedTuple):
        count: int | None = None
        mean: float | None = None
        std: float | None = None
        min: float | None = None
        p50: float | None = None
        p90: float | None = None
        p95: float | None = None
        p99: float | None = None
        p999: float | None = None
        max: float | None = None
        extra: dict[str, int] | None = None

        def values(self) -> tuple[float | None, ...]:
            return tuple(getattr(self, key) for key in STAT_KEYS)

    return Stats


def kinds() -> dict[str, tuple[Callable[[Callable[[type], type]], type], Callable[[type], type]]]:
    from metrics.results import frozen  # this tree's (not in the trees before it)

    return {"dataclass(frozen, slots)": (stats_class, dataclass(frozen=True, slots=True)),
            "@frozen": (stats_class, frozen), "NamedTuple": (stats_tuple, lambda cls: cls)}


def define(repeat: int, per_round: int = 20) -> None:
    for name, (make, decorate) in kinds().items():
        best = _best(repeat, per_round, functools.partial(make, decorate))
        print(f"{name:26} {best * 1e3:7.3f} ms per class (min of {repeat} x {per_round})")


def build(repeat: int, per_round: int = 20_000) -> None:
    values = (559, 1.0, 0.5, 0.1, 0.9, 1.5, 1.7, 2.0, 2.2, 2.5, {})
    for name in ("dataclass(frozen, slots)", "@frozen"):
        make, decorate = kinds()[name]
        cls: Any = make(decorate)
        calls = {"positional, 11 fields": functools.partial(cls, *values),
                 "Stats(0), defaults": functools.partial(cls, 0),
                 "by keyword, 3 fields": functools.partial(cls, count=3, p50=1.0, max=2.0)}
        for call, run in calls.items():
            print(f"{name:26} {call:22} {_best(repeat, per_round, run) * 1e6:6.2f} µs per instance")


def stats(repeat: int, per_round: int = 20_000) -> None:
    from metrics.results import Stats

    print(f"Stats of {metrics.__file__}")
    block = {"count": 559, "mean": 1.0, "std": 0.5, "min": 0.1, "p50": 0.9, "p90": 1.5, "p95": 1.7, "p99": 2.0,
             "p999": 2.2, "max": 2.5}
    calls = {"Stats.from_json(block)": functools.partial(Stats.from_json, block),
             "Stats(10 values)": functools.partial(Stats, *block.values()), "Stats(0)": functools.partial(Stats, 0)}
    for call, run in calls.items():
        print(f"{call:24} {_best(repeat, per_round, run) * 1e6:6.2f} µs per instance")


def _best(repeat: int, per_round: int, one: Callable[[], object]) -> float:
    """Seconds per call of `one`: the fastest of `repeat` rounds of `per_round` calls."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(per_round):
            one()
        best = min(best, time.perf_counter() - start)
    return best / per_round


def _trees(specs: list[str]) -> dict[str, Path]:
    trees = {}
    for spec in specs:
        name, _, path = spec.partition("=")
        trees[name] = Path(path).resolve()
        probe = (f"import sys; sys.path.insert(0, {str(trees[name])!r}); import loadgen, metrics, exporters; "
                 "print(loadgen.__file__, metrics.__file__, exporters.__file__)")
        shown = subprocess.run([sys.executable, "-c", probe], cwd=trees[name], check=True, env=ENV,
                               capture_output=True, text=True).stdout.split()
        print(f"{name}: {' '.join(shown)}")
        if not all(path.startswith(f"{trees[name]}/") for path in shown):
            raise SystemExit(f"{name} imports {shown}, not its own tree")
    return trees


def _report(tree: Path, run_dir: Path, *flags: str) -> tuple[float, str]:
    """CPU seconds (user+sys) of one `goodput report`, and its stderr."""
    argv = [sys.executable, *flags, "-c", PROGRAM.format(tree=str(tree)), "report", str(run_dir)]
    child = subprocess.Popen(argv, cwd=tree, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"report from {tree} failed ({child.returncode}): {err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, err


def _copies(trees: dict[str, Path], run_dir: Path, scratch: Path) -> dict[str, Path]:
    out = {}
    for name in trees:
        out[name] = scratch / name
        shutil.copytree(run_dir, out[name])
    return out


def report(run_dir: Path, specs: list[str], repeat: int) -> None:
    trees = _trees(specs)
    names = list(trees)
    cpu: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="frozen-views-") as scratch:
        dirs = _copies(trees, run_dir, Path(scratch))
        for name in names:  # each tree's bytecode written once before timing
            _report(trees[name], dirs[name])
        for n in range(repeat):
            order = names[n % len(names):] + names[:n % len(names)]
            for name in order:
                cpu[name].append(_report(trees[name], dirs[name])[0])
            print(f"pass {n + 1}: " + ", ".join(f"{name} {cpu[name][-1]:.3f} s" for name in names)
                  + f"  (load {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    first = names[0]
    for name in names:
        ratios = [a / b for a, b in zip(cpu[name], cpu[first], strict=True)]
        higher = sum(r > 1 for r in ratios)
        print(f"{name}: median {statistics.median(cpu[name]):.3f} s, min {min(cpu[name]):.3f} s; median ratio "
              f"to {first} {statistics.median(ratios):.3f} (higher in {higher} of {repeat})")


def imports(run_dir: Path, specs: list[str], repeat: int) -> None:
    trees = _trees(specs)
    with tempfile.TemporaryDirectory(prefix="frozen-views-") as scratch:
        dirs = _copies(trees, run_dir, Path(scratch))
        for name, tree in trees.items():
            _report(tree, dirs[name])
        for name, tree in trees.items():
            totals = []
            for _ in range(repeat):
                totals.append(_views_ms(_report(tree, dirs[name], "-X", "importtime")[1]))
            print(f"{name}: views' modules {statistics.median(totals):.1f} ms self time, median of {repeat} "
                  f"(min {min(totals):.1f})  (load {' '.join(f'{x:.2f}' for x in os.getloadavg())})")


def _views_ms(importtime: str) -> float:
    total_us = 0
    for line in importtime.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, _, module = line.removeprefix("import time:").split("|")
        module = module.strip()
        if module.startswith("metrics.results") and module not in EARLY and own.strip().isdigit():
            total_us += int(own)
    return total_us / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("define", "build", "stats", "report", "imports"))
    parser.add_argument("run_dir", nargs="?", type=Path)
    parser.add_argument("--tree", action="append", default=[],
                        help="NAME=PATH of a source tree (report, imports)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if args.what == "define":
        define(args.repeat)
    elif args.what == "build":
        build(args.repeat)
    elif args.what == "stats":
        stats(args.repeat)
    elif args.run_dir is None or not args.tree:
        parser.error(f"{args.what} needs RUN_DIR and --tree NAME=PATH")
    elif args.what == "report":
        report(args.run_dir, args.tree, args.repeat)
    else:
        imports(args.run_dir, args.tree, args.repeat)


if __name__ == "__main__":
    main()
