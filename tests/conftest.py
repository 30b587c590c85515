"""Suite-wide settings: Hypothesis profiles, and a run that fails when a test skips for a reason not
listed here.

Hypothesis: with CI set (CI=true, as CI services set it) the `ci` profile is derandomized, so every CI
run tries the same examples and a failure there is reproducible; locally the `dev` profile draws fresh
examples each run, more of them. HYPOTHESIS_PROFILE chooses one explicitly.

Skips: a test that skips in CI hides what it was written to check. Under CI (or with
GOODPUT_STRICT_SKIPS=1) every skip must be on ALLOWED_SKIPS, matched by test (its node id without the
parameters) and by reason; any other skip fails the run, with the list of them. Locally the same list is
printed, and the run is not failed (a machine without chromium or Prometheus may skip those tests).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings as hypothesis_settings

pytest_plugins = ["pytester"]  # tests/test_conftest_skips.py runs this file's hooks in a scratch suite


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
hypothesis_settings.register_profile("dev", max_examples=300, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _flag("CI") else "dev"))

# (test, reason): the only skips CI accepts. Add one only with the reason it cannot run there.
ALLOWED_SKIPS: frozenset[tuple[str, str]] = frozenset({
    # CI runs as root, and root ignores directory permissions; the test beside it covers the same path by
    # injecting the kernel's refusal.
    ("tests/loadgen/test_output_safety.py::test_a_read_only_directory_is_a_usage_error",
     "root ignores directory permissions"),
})

_skipped: list[tuple[str, str]] = []


def _strict() -> bool:
    return _flag("CI") or _flag("GOODPUT_STRICT_SKIPS")


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def _record(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append((report.nodeid.split("[", 1)[0], _reason(report)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _record(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _record(report)  # a module-level skip (importorskip) skips the whole file at collection


def unexpected_skips() -> list[tuple[str, str]]:
    return sorted({s for s in _skipped if s not in ALLOWED_SKIPS})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _strict() and unexpected_skips() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    unexpected = unexpected_skips()
    if not unexpected:
        return
    verdict = "these fail the run" if _strict() else "allowed locally; CI fails on them"
    terminalreporter.section("skips not on the allow-list (tests/conftest.py)")
    for test, reason in unexpected:
        terminalreporter.write_line(f"{test}: {reason}")
    terminalreporter.write_line(f"{len(unexpected)} skipped test(s) not on ALLOWED_SKIPS: {verdict}")
