"""Mutation testing one module at a time (what `make mutate` runs).

mutmut 3 reads its settings only from ./pyproject.toml, and before it tries a mutant it runs the whole
test selection twice (a clean run and a run that records which test reaches which function). Over
every listed module that selection is most of tests/metrics; for one module it is a few files. So each
module runs in its own scratch copy of the tree, build/mutate/<module>/, whose pyproject.toml is ours
with [tool.mutmut] narrowed to that module and to the tests listed for it in MODULES below.

    python -m bench.mutate                          # every module in MODULES, one after the other
    python -m bench.mutate loadgen/http/sse.py      # one module (a prefix: metrics/gate = its files)
    python -m bench.mutate --list                   # the modules and their tests

Each module's line gives mutants, killed, survived (with "no tests": mutants in code the listed tests
never reach) and the survivors' names; `cd build/mutate/<module> && mutmut show NAME` shows one, and
`mutmut run NAME` there tries it again after a new test (copy the test into the scratch tests/ first,
or rerun this script). Scores and the equivalent mutants: docs/testing.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / "build" / "mutate"
# What the tests import: mutmut mutates source_paths in its mutants/ copy, and also_copy rides along.
TREE = ("metrics", "loadgen", "exporters", "refserver", "tests")

_LATENCY_TESTS = (
    "tests/metrics/test_derive.py", "tests/metrics/test_derive_hand.py", "tests/metrics/test_stats.py",
    "tests/metrics/test_fluidity.py", "tests/metrics/test_fluidity_hand.py", "tests/metrics/test_burst.py",
    "tests/metrics/test_samples_hand.py", "tests/metrics/test_aggregate.py",
    "tests/metrics/test_aggregate_hand.py", "tests/metrics/test_derive_mutants.py",
    "tests/metrics/test_fluidity_mutants.py", "tests/metrics/test_samples_mutants.py",
    "tests/metrics/test_aggregate_mutants.py", "tests/metrics/test_burst_mutants.py",
)
_SUMMARY_TESTS = (
    "tests/metrics/test_summary.py", "tests/metrics/test_buckets.py", "tests/metrics/test_turns.py",
    "tests/metrics/test_thresholds_hand.py", "tests/metrics/test_thresholds_eval.py",
    "tests/metrics/test_tokens.py", "tests/metrics/test_model_buckets.py", "tests/metrics/test_images.py",
    "tests/metrics/test_reasoning_metrics.py", "tests/metrics/test_cancel_accounting.py",
    "tests/metrics/test_summary_mutants.py", "tests/metrics/test_tokens_mutants.py",
    "tests/metrics/test_window_mutants.py", "tests/metrics/test_run_samples_mutants.py",
    "tests/metrics/test_buckets_mutants.py", "tests/metrics/test_sessions_mutants.py",
    "tests/metrics/test_failures_mutants.py", "tests/metrics/test_server_side_mutants.py",
    "tests/metrics/test_answers_mutants.py",
)
_GATE_TESTS = (
    "tests/metrics/test_thresholds.py", "tests/metrics/test_thresholds_config.py",
    "tests/metrics/test_thresholds_eval.py", "tests/metrics/test_thresholds_hand.py",
    "tests/metrics/test_thresholds_lines.py", "tests/metrics/test_gate_mutants.py",
    "tests/metrics/test_gate_config_mutants.py",
)
_COMPARE_TESTS = (
    "tests/metrics/test_compare.py", "tests/metrics/test_compare_noise.py",
    "tests/metrics/test_compare_rule.py", "tests/metrics/test_compare_rule_mutants.py",
    "tests/metrics/test_compare_mutants.py",
)
_CAPACITY_TESTS = (
    "tests/metrics/test_capacity_search.py", "tests/metrics/test_capacity_search_limits.py",
    "tests/metrics/test_capacity_search_oracle.py", "tests/metrics/test_capacity_proportion.py",
    "tests/metrics/test_capacity_saturation.py", "tests/metrics/test_capacity_mutants.py",
    "tests/metrics/test_proportion_mutants.py", "tests/metrics/test_evidence_mutants.py",
    "tests/metrics/test_saturation_mutants.py",
)
_STREAM_TESTS = (
    "tests/loadgen/test_sse.py", "tests/loadgen/test_sse_property.py", "tests/loadgen/test_chunk_tokens.py",
    "tests/loadgen/test_sse_mutants.py", "tests/loadgen/test_chunks_mutants.py",
    "tests/loadgen/test_chunk_tokens_mutants.py",
)
_ARRIVAL_TESTS = (
    "tests/loadgen/test_arrivals.py", "tests/loadgen/test_traces.py", "tests/loadgen/test_exact_rate.py",
    "tests/loadgen/test_arrivals_mutants.py", "tests/loadgen/test_schedule_mutants.py",
)
_API_TESTS = (
    "tests/loadgen/test_api_bodies.py", "tests/loadgen/test_client_payload.py", "tests/loadgen/test_api_cli.py",
    "tests/loadgen/test_api_events_mutants.py", "tests/loadgen/test_api_responses_mutants.py",
    "tests/loadgen/test_api_messages_mutants.py", "tests/loadgen/test_api_registry_mutants.py",
)
_OUTPUT_KIND_TESTS = (
    "tests/loadgen/test_chunks_mutants.py", "tests/loadgen/test_chunk_tokens.py",
    "tests/loadgen/test_output_kinds_mutants.py",
)

# module -> the unit tests that reach it (a listed file that does not exist is skipped). End-to-end tests are not listed: they start servers and would dominate every mutant's time.
MODULES: dict[str, tuple[str, ...]] = {
    "metrics/slo.py": ("tests/metrics/test_slo.py", "tests/metrics/test_thresholds_hand.py"),
    "metrics/latency/derive.py": _LATENCY_TESTS,
    "metrics/latency/stats.py": _LATENCY_TESTS,
    "metrics/latency/fluidity.py": _LATENCY_TESTS,
    "metrics/latency/samples.py": _LATENCY_TESTS,
    "metrics/latency/aggregate.py": _LATENCY_TESTS,
    "metrics/burst.py": _LATENCY_TESTS,
    "metrics/latency/answer.py": ("tests/metrics/test_reasoning_metrics.py", "tests/metrics/test_answer_mutants.py"),
    "metrics/summary/build.py": _SUMMARY_TESTS,
    "metrics/summary/buckets.py": _SUMMARY_TESTS,
    "metrics/summary/failures.py": _SUMMARY_TESTS,
    "metrics/summary/lost.py": _SUMMARY_TESTS,
    "metrics/gate/run_samples.py": _SUMMARY_TESTS + _COMPARE_TESTS,
    "metrics/summary/tokens.py": _SUMMARY_TESTS,
    "metrics/summary/window.py": _SUMMARY_TESTS,
    "metrics/summary/answers.py": _SUMMARY_TESTS,
    "metrics/summary/cancels.py": _SUMMARY_TESTS,
    "metrics/summary/sessions.py": _SUMMARY_TESTS,
    "metrics/summary/server_side.py": _SUMMARY_TESTS,
    "metrics/gate/evaluate.py": _GATE_TESTS,
    "metrics/gate/thresholds.py": _GATE_TESTS,
    "metrics/gate/config.py": _GATE_TESTS,
    "metrics/gate/compare.py": _COMPARE_TESTS,
    "metrics/gate/compare_rule.py": _COMPARE_TESTS,
    "metrics/capacity_search/search.py": _CAPACITY_TESTS,
    "metrics/capacity_search/proportion.py": _CAPACITY_TESTS,
    "metrics/capacity_search/evidence.py": _CAPACITY_TESTS,
    "metrics/capacity_search/saturation.py": _CAPACITY_TESTS,
    "loadgen/http/sse.py": _STREAM_TESTS,
    "loadgen/http/chunks.py": _STREAM_TESTS,
    "loadgen/http/chunk_tokens.py": _STREAM_TESTS,
    "loadgen/workload/arrivals.py": _ARRIVAL_TESTS,
    "loadgen/workload/schedule.py": _ARRIVAL_TESTS,
    "loadgen/http/api/events.py": _API_TESTS,
    "loadgen/http/api/responses.py": _API_TESTS,
    "loadgen/http/api/messages.py": _API_TESTS,
    "loadgen/http/output_kinds.py": _OUTPUT_KIND_TESTS,
    "loadgen/http/api/chat.py": _API_TESTS,
    "loadgen/http/api/completions.py": _API_TESTS,
    "loadgen/http/api/registry.py": _API_TESTS,
    "loadgen/http/api/url.py": _API_TESTS,
}

# mutmut's statuses that mean a test (or the time limit) caught the mutant; the rest survived.
_CAUGHT = ("killed", "timeout", "caught by type check", "segfault")
_SECTION = re.compile(r"^\[tool\.mutmut\]\n(?:(?!\[).*\n)*", re.MULTILINE)


def _config(module: str, tests: list[str]) -> str:
    """Our pyproject.toml with [tool.mutmut] narrowed to one module and its tests."""
    text = (ROOT / "pyproject.toml").read_text()
    section = "\n".join([
        "[tool.mutmut]",
        'source_paths = ["metrics", "loadgen"]',
        'also_copy = ["exporters", "refserver"]',
        f"only_mutate = {json.dumps([module])}",
        'pytest_add_cli_args = ["-m", "not slow", "-p", "no:randomly", "-p", "no:cacheprovider", "-q"]',
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        "",
        "",
    ])
    narrowed, found = _SECTION.subn(section, text)
    if found != 1:
        raise SystemExit("pyproject.toml: no [tool.mutmut] section to narrow")
    return narrowed


def _prepare(module: str, tests: list[str]) -> Path:
    where = SCRATCH / module.replace("/", "_").removesuffix(".py")
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in TREE:
        shutil.copytree(ROOT / name, where / name, ignore=ignore)
    (where / "pyproject.toml").write_text(_config(module, tests))
    return where


def _tally(where: Path) -> tuple[dict[str, int], list[str]]:
    """Counts by status and the names of the mutants that no test killed, from mutmut's own records."""
    try:
        from mutmut.stats import status_by_exit_code
    except ImportError:  # mutmut before 3.8 kept it in its main module
        from mutmut.__main__ import status_by_exit_code  # type: ignore[attr-defined,no-redef]

    counts: dict[str, int] = {}
    survivors: list[str] = []
    for meta in sorted((where / "mutants").rglob("*.py.meta")):
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            status = status_by_exit_code[code]
            counts[status] = counts.get(status, 0) + 1
            if status not in _CAUGHT:
                survivors.append(f"{name} ({status})")
    return counts, survivors


def mutate(module: str, max_children: int) -> int:
    tests = [t for t in MODULES[module] if (ROOT / t).exists()]
    where = _prepare(module, tests)
    print(f"== {module}: {len(tests)} test files, in {where.relative_to(ROOT)}", flush=True)
    # The scratch tree first on the path (not the checkout an editable install names), and Hypothesis's
    # derandomized profile: the same examples for every mutant, so a verdict does not depend on luck.
    env = dict(os.environ, PYTHONPATH=str(where), HYPOTHESIS_PROFILE="ci")
    done = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)], cwd=where, env=env)
    counts, survivors = _tally(where)
    total = sum(counts.values())
    killed = sum(counts.get(status, 0) for status in _CAUGHT)
    score = f"{100 * killed / total:.1f} %" if total else "-"
    print(f"{module}: {total} mutants, {killed} killed ({score}); {counts}")
    for line in survivors:
        print(f"    {line}")
    return done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="paths or folder prefixes from MODULES (default: all)")
    parser.add_argument("--max-children", type=int, default=2, help="mutants tried at once (default 2)")
    parser.add_argument("--list", action="store_true", help="print the modules and their tests")
    args = parser.parse_args()
    if args.list:
        for module, tests in MODULES.items():
            print(module, " ".join(tests))
        return
    chosen = [m for m in MODULES if not args.modules or any(m.startswith(p) for p in args.modules)]
    if not chosen:
        raise SystemExit(f"no module in MODULES matches {args.modules} (see --list)")
    failed = [m for m in chosen if mutate(m, args.max_children) != 0]
    if failed:
        raise SystemExit(f"mutmut failed on: {', '.join(failed)}")


if __name__ == "__main__":
    main()
