"""JUnit XML and Markdown of threshold verdicts: parsed back, one test case per threshold, failures
carrying the measured value; the compare table as Markdown."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from exporters.junit import junit_xml, write_junit
from exporters.markdown import compare_markdown, gate_markdown
from metrics.gate.compare import Row
from metrics.gate.evaluate import RunView, evaluate
from metrics.gate.thresholds import parse_threshold

SUMMARY = {
    "latency": {"ttft_s": {"count": 3, "mean": 0.2, "std": 0.1, "min": 0.1, "p50": 0.2, "p90": 0.28, "p95": 0.29,
                           "p99": 0.298, "p999": 0.2998, "max": 0.3}},
    "goodput": {"good": 2, "measured": 3, "attainment": 2 / 3, "requests_per_s": 1.0},
    "requests": {"in_window": 3, "in_window_failed": 1},
    "throughput": {"output_tokens_per_s": 50.0},
    "buckets": [],
}
TEXTS = ["ttft:p(99) < 500ms", "goodput:attainment >= 0.95", "tpot:avg < 40ms", "errors:rate < 50% | nodata=pass",
         "ttft{cache:full}:p(95) < 1s | nodata=pass"]


def _verdicts():  # type: ignore[no-untyped-def]
    return evaluate([parse_threshold(t) for t in TEXTS], RunView(SUMMARY))


def test_junit_parses_back_with_one_case_per_threshold(tmp_path: Path) -> None:
    path = tmp_path / "gate.xml"
    write_junit(path, _verdicts(), run="runs/cand")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "2"
    [suite] = root.findall("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == "2" and suite.get("errors") == "0"
    assert suite.find("properties/property").get("value") == "runs/cand"  # type: ignore[union-attr]
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == TEXTS
    assert all(c.get("classname") == "goodput.thresholds" for c in cases)
    failed = {c.get("name"): c.find("failure") for c in cases}
    assert [name for name, f in failed.items() if f is not None] == ["goodput:attainment >= 0.95", "tpot:avg < 40ms"]
    attainment = failed["goodput:attainment >= 0.95"]
    assert attainment is not None and attainment.get("type") == "threshold"
    assert "measured 0.6667 (66.67%)" in (attainment.get("message") or "")
    assert "no data" in (failed["tpot:avg < 40ms"].get("message") or "")  # type: ignore[union-attr]
    assert "measured 298 ms" in (cases[0].findtext("system-out") or "")


def test_junit_escapes_expressions() -> None:
    xml = junit_xml(evaluate([parse_threshold("ttft:p(99) < 500ms")], RunView(SUMMARY)))
    assert b"&lt; 500ms" in xml and xml.startswith(b"<?xml")
    assert ET.fromstring(xml).find("testsuite/testcase").get("name") == "ttft:p(99) < 500ms"  # type: ignore[union-attr]


def test_gate_markdown_lists_every_verdict() -> None:
    text = gate_markdown(_verdicts(), run="runs/cand", baseline="runs/main")
    lines = text.splitlines()
    assert lines[0] == "### goodput gate: FAILED (2 of 5 thresholds)"
    assert "Baseline: `runs/main`" in text
    rows = [line for line in lines if line.startswith("| ✅") or line.startswith("| ❌")]
    assert len(rows) == 5
    assert rows[0].startswith("| ✅ | `ttft:p(99) < 500ms` | 298 ms | 500 ms |")
    assert rows[1].startswith("| ❌")
    assert "nodata=pass" in rows[4]
    assert "\\|" in rows[3]  # the pipe of "| nodata=pass" is escaped inside the table


def test_compare_markdown() -> None:
    q = parse_threshold("ttft:p(50) < 1").query
    rows = [Row(q, "all", 0.1, 0.15, 50, 50, (0.03, 0.07), 0.99, "regression"),
            Row(q, "prompt_tokens=0-128", 0.1, 0.1, 20, 20, (-0.01, 0.01), 0.99, ""),
            Row(q, "cache=none", 0.1, None, 5, 0, None, None, "", "too few samples for an interval")]
    text = compare_markdown(rows, base="runs/main", cand="runs/cand", confidence=0.95, seed=3)
    assert text.startswith("### goodput compare: 1 regression(s)")
    assert "seed 3" in text
    assert "| all | `ttft:p(50)` | 50/50 | 100 ms | 150 ms | +50 ms (+50.0%) | [+30 ms, +70 ms] | ❌ regression |" in text
    assert "| n.s. |" in text and "too few samples" in text
