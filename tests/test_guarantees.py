"""docs/guarantees.md names, next to each promise, the tests that keep it: every one of them exists, so
the page cannot go on citing a test that was renamed or removed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guarantees.md"
CITED = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def test_every_test_the_guarantees_name_exists() -> None:
    cited = CITED.findall(PAGE.read_text(encoding="utf-8"))
    assert len(cited) >= 20
    missing = [f"{path}::{name}" for path, name in cited
               if not re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M)]
    assert missing == []


def test_every_section_cites_a_test() -> None:
    sections = re.split(r"^## ", PAGE.read_text(encoding="utf-8"), flags=re.M)[1:]
    assert [s.splitlines()[0] for s in sections] == ["Never lost", "Never written", "Never trusted"]
    for section in sections:
        for promise in re.split(r"^- ", section, flags=re.M)[1:]:
            assert CITED.search(promise), promise[:80]
