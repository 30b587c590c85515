"""`--scrape NAME=URL` (repeatable): the GPU telemetry endpoints of a run, checked as the option is read.

The scraping itself is loadgen.run.gpu_scrape; this module only parses and checks the values, so the spec can
hold a run to them without importing the run.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx


@dataclass(frozen=True, slots=True)
class ScrapeTarget:
    name: str
    url: str


def parse_scrape_targets(values: tuple[str, ...] | list[str]) -> tuple[ScrapeTarget, ...]:
    """`NAME=URL` each (NAME: letters, digits, `-`, `_`; URL: http(s)); ValueError with a CLI-ready line."""
    targets: list[ScrapeTarget] = []
    for value in values:
        name, sep, url = value.partition("=")
        name, url = name.strip(), url.strip()
        if not sep or not name or not url:
            raise ValueError(f"--scrape expects NAME=URL (e.g. dcgm=http://127.0.0.1:9400/metrics), got {value!r}")
        if not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"--scrape name must be letters, digits, '-' or '_', got {name!r}")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--scrape {name}: the URL must be http(s), got {url!r}")
        if _secret_part(url):
            raise ValueError(f"--scrape {name}: the URL must carry no credentials and no query (it is written to "
                             "run.json)")
        if any(t.name == name for t in targets):
            raise ValueError(f"--scrape name {name!r} is given twice")
        targets.append(ScrapeTarget(name, url))
    return tuple(targets)


def _secret_part(url: str) -> bool:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise ValueError(f"--scrape: not a URL: {url!r}") from None
    return bool(parsed.userinfo or parsed.query)
