"""The documentation holds together: every relative link of README.md and docs/*.md reaches a file (and, for
a `#fragment`, a heading of that file), every docs page is reachable from the index, and the code refers
only to documents inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.glob("*.md")])
CODE_PACKAGES = ("loadgen", "metrics", "exporters", "refserver")
# References to design notes that are not in this repository; docs/ is where the design lives now.
OUTSIDE_REFERENCE = re.compile(r"\bDESIGN\b|seed F[0-9]")

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text without code blocks and inline code, where link-like text is not a link."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def links(path: Path) -> list[str]:
    return _LINK.findall(_prose(path.read_text(encoding="utf-8")))


def anchor(heading: str) -> str:
    """The fragment a heading gets on GitHub: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]{2,}|[`*]", "", heading).strip().lower()  # emphasis and code marks, not snake_case
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = anchor(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE)  # http:, https:, mailto:, ...


def test_anchor_slugs_follow_github() -> None:
    assert anchor("Token accounting: k_j, N, P, C") == "token-accounting-k_j-n-p-c"
    assert anchor("`summary.json`") == "summaryjson"
    assert anchor("Scraping the server's metrics") == "scraping-the-servers-metrics"


def test_link_finder_skips_code() -> None:
    text = "[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n[d](https://example.org) ![e](img.png)\n"
    assert _LINK.findall(_prose(text)) == ["x.md", "https://example.org", "img.png"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in links(page):
        if not _relative(target):
            continue
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file {dest}")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)} has broken links:\n" + "\n".join(broken)


def test_every_docs_page_is_in_the_index() -> None:
    index = {(DOCS / t.partition("#")[0]).resolve() for t in links(DOCS / "README.md") if _relative(t)}
    missing = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and p.resolve() not in index]
    assert not missing, f"docs/README.md does not link {missing}"


def test_readme_links_the_docs_and_keeps_the_quickstart() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert any(t.startswith("docs/") for t in links(ROOT / "README.md")), "README.md must link docs/"
    # .ci/run runs `make test`, the README's test command; the quickstart is these two commands.
    assert "make test" in readme
    assert "make demo" in readme


def test_code_refers_only_to_documents_in_the_repository() -> None:
    """Docstrings and comments must point into the repository (docs/...), not at design notes that are
    not part of it. Until every such reference is rewritten, this test lists where they still are."""
    found = []
    for package in CODE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if OUTSIDE_REFERENCE.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, (
        "references to documents outside the repository (replace each with the docs/ page and section that "
        "now holds it, e.g. docs/metrics.md#per-request-metrics):\n" + "\n".join(found)
    )


def test_every_run_option_is_documented_in_run_config() -> None:
    from loadgen.spec.options import OPTIONS

    text = (ROOT / "docs" / "run-config.md").read_text()
    missing = [o.flag for o in OPTIONS if f"| `{o.flag}` |" not in text or (not o.secret and f"| `{o.file_key}` |" not in text)]
    assert not missing, f"docs/run-config.md has no row for {', '.join(missing)}"


def test_run_config_key_table_is_the_one_made_from_the_option_declarations() -> None:
    from loadgen.spec.key_table import BEGIN, END, key_table

    text = (ROOT / "docs" / "run-config.md").read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == key_table(), (
        "docs/run-config.md's key table differs from the option declarations: "
        "python -m loadgen.spec.key_table docs/run-config.md")
