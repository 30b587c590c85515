"""The suite's skip rule (tests/conftest.py), run on a scratch suite in a subprocess: under CI a skip not
on the allow-list fails the run and is named; locally it is only reported; an allowed one passes."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = (Path(__file__).parent / "conftest.py").read_text().replace('pytest_plugins = ["pytester"]', "")
SCRATCH = '''
import pytest

def test_runs():
    assert 1 + 1 == 2

def test_skips():
    pytest.skip("no frobnicator here")
'''


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None,
         allowed: bool = False) -> pytest.RunResult:
    conftest = CONFTEST
    if allowed:
        conftest = conftest.replace('ALLOWED_SKIPS: frozenset[tuple[str, str]] = frozenset({',
                                    'ALLOWED_SKIPS: frozenset[tuple[str, str]] = frozenset({\n'
                                    '    ("test_scratch.py::test_skips", "no frobnicator here"),')
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_scratch=SCRATCH)
    monkeypatch.delenv("GOODPUT_STRICT_SKIPS", raising=False)
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    return pytester.runpytest_subprocess("-p", "no:randomly", "-rs")


def test_an_unlisted_skip_fails_a_ci_run_and_is_named(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, "true")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*test_scratch.py::test_skips: no frobnicator here*", "*these fail the run*"])


def test_locally_an_unlisted_skip_is_reported_not_failed(pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, None)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*allowed locally; CI fails on them*", "*SKIPPED*no frobnicator here*"])
    assert _run(pytester, monkeypatch, "false").ret == pytest.ExitCode.OK


def test_an_allowed_skip_passes_a_ci_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, "true", allowed=True)
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1, skipped=1)
    assert "not on ALLOWED_SKIPS" not in result.stdout.str()


def test_the_allow_list_names_tests_that_exist() -> None:
    from tests.conftest import ALLOWED_SKIPS

    root = Path(__file__).parent.parent
    for test, reason in ALLOWED_SKIPS:
        path, _, name = test.partition("::")
        source = (root / path).read_text()
        assert f"def {name}(" in source and reason in source, test
