"""Threshold verdicts as JUnit XML: one test case per threshold, so CI systems (GitHub, GitLab, Jenkins)
show each pass condition natively. A failed threshold is a `<failure>`; its message carries the measured
value and the limit. Written atomically."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from metrics.gate import Verdict
from metrics.results import write_atomic

SUITE = "goodput thresholds"


def junit_xml(verdicts: Sequence[Verdict], *, suite: str = SUITE, run: str = "") -> bytes:
    """The XML document (UTF-8, with declaration)."""
    failures = sum(1 for v in verdicts if not v.passed)
    root = ET.Element("testsuites", name="goodput", tests=str(len(verdicts)), failures=str(failures),
                      errors="0")
    attrs = {"name": suite, "tests": str(len(verdicts)), "failures": str(failures), "errors": "0",
             "skipped": "0", "time": "0"}
    suite_el = ET.SubElement(root, "testsuite", attrs)
    if run:
        props = ET.SubElement(suite_el, "properties")
        ET.SubElement(props, "property", name="run", value=run)
    for v in verdicts:
        case = ET.SubElement(suite_el, "testcase", classname="goodput.thresholds", name=v.threshold.text, time="0")
        if not v.passed:
            failure = ET.SubElement(case, "failure", message=v.line(), type="threshold")
            failure.text = v.line()
        ET.SubElement(case, "system-out").text = v.line()
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True)) + b"\n"


def write_junit(path: Path, verdicts: Sequence[Verdict], *, run: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # CI paths like reports/gate.xml need not exist yet
    write_atomic(path, junit_xml(verdicts, run=run))
