"""Scraping GPU telemetry around a run (`goodput run --scrape NAME=URL`, repeatable).

Each endpoint is scraped like the server's /metrics (loadgen.run.scrape: once before the first request, every
`--server-metrics-interval` during the run, once after the last request), and every sample of the GPU families
below is kept per GPU, with the wall-clock time of its scrape, in `gpu_metrics.json`. The names are those
of NVIDIA's DCGM exporter (dcgm-exporter), the standard one; each series names its GPU by the labels `gpu`
(index), `UUID`, `modelName` and `Hostname`. metrics.server.gpu turns the samples into the `gpu` section of
summary.json once the measurement window is known. A scrape that fails is counted and its reason kept (a
note, never a failed run); an endpoint that does not answer at the start is not scraped again.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from loadgen.run.scrape import ServerScraper, scrape_failure
from loadgen.spec import ScrapeTarget
from metrics.results import GPU_FILE as GPU_FILE
from metrics.server import Figure, GpuDocument, GpuReading, GpuSourceJSON

if TYPE_CHECKING:
    from metrics.results import JsonObject

# sample key → DCGM exporter family, and its unit as the exporter gives it.
FAMILIES: dict[Figure, str] = {
    "util_pct": "DCGM_FI_DEV_GPU_UTIL",  # %
    "power_w": "DCGM_FI_DEV_POWER_USAGE",  # W
    "fb_used_mib": "DCGM_FI_DEV_FB_USED",  # MiB
    "sm_active": "DCGM_FI_PROF_SM_ACTIVE",  # ratio 0..1
}
_BY_FAMILY = {family: key for key, family in FAMILIES.items()}


class TimedReading(GpuReading):
    """A reading and the wall-clock time its scrape was answered."""

    unix_s: float


def gpu_samples(text: str) -> list[GpuReading]:
    """The GPU families of one Prometheus text scrape: one entry per GPU with its labels and values.
    Raises ValueError on text the parser cannot read."""
    from prometheus_client.parser import text_string_to_metric_families

    per_gpu: dict[tuple[str, str], GpuReading] = {}
    for family in text_string_to_metric_families(text):
        key = _BY_FAMILY.get(family.name)
        if key is None:
            continue
        for s in family.samples:
            if s.name != family.name or not math.isfinite(float(s.value)):
                continue
            labels = s.labels
            gpu_id = labels.get("UUID") or labels.get("gpu") or labels.get("device") or ""
            entry = per_gpu.setdefault((labels.get("Hostname", ""), gpu_id), GpuReading(
                gpu=labels.get("gpu"), uuid=labels.get("UUID"), model_name=labels.get("modelName"),
                hostname=labels.get("Hostname")))
            entry[key] = float(s.value)
    return list(per_gpu.values())


class GpuScraper(ServerScraper):
    """One `--scrape` endpoint: the server scraper's schedule, the GPU families' samples kept."""

    def __init__(self, target: ScrapeTarget, *, interval_s: float) -> None:
        super().__init__(target.url, interval_s=interval_s)
        self.name = target.name
        self.samples: list[TimedReading] = []
        self.scrapes = 0

    def scrape(self) -> Any:
        resp = self._client.get(self.url)
        resp.raise_for_status()
        unix_s = time.time()
        found = gpu_samples(resp.text)
        self.scrapes += 1
        self.samples += [{"unix_s": unix_s, **entry} for entry in found]
        return found

    def source(self) -> GpuSourceJSON:
        from loadgen.http import public_url, scrub_userinfo

        out: GpuSourceJSON = {"name": self.name, "url": public_url(self.url), "interval_s": self.interval_s,
                              "scrapes": self.scrapes, "failed_scrapes": len(self.failures)}
        if self.failures:
            out["last_failure"] = scrub_userinfo(self.failures[-1])
        return out


class GpuScrapers:
    """Every `--scrape` endpoint of a run: started together, stopped together, saved in one file."""

    def __init__(self, targets: tuple[ScrapeTarget, ...], *, interval_s: float) -> None:
        self.scrapers = [GpuScraper(t, interval_s=interval_s) for t in targets]
        self.failed_at_start: list[GpuScraper] = []

    def start(self) -> list[str]:
        """The 'before' scrapes; returns one warning line per endpoint that did not answer (not scraped again)."""
        warnings = []
        for scraper in list(self.scrapers):
            try:
                scraper.start()
            except (httpx.HTTPError, ValueError, OSError) as exc:
                scraper.abort()
                scraper.failures.append(scrape_failure(exc))
                self.scrapers.remove(scraper)
                self.failed_at_start.append(scraper)
                warnings.append(f"cannot scrape {scraper.name} at {scraper.source()['url']}: {scrape_failure(exc)}")
        return warnings

    def stop(self) -> None:
        for scraper in self.scrapers:
            scraper.stop()

    def abort(self) -> None:
        for scraper in self.scrapers:
            scraper.abort()

    def document(self) -> GpuDocument:
        every = self.scrapers + self.failed_at_start
        return {"sources": [s.source() for s in every],
                "samples": [{"source": s.name, **point} for s in every for point in s.samples]}

    def save(self, out_dir: Path) -> Path:
        from metrics.results import write_json

        path = out_dir / GPU_FILE
        write_json(path, self.document())
        return path


def add_gpu_section(out: Path, summary: JsonObject) -> None:
    """Put the `gpu` section into summary and rewrite summary.json, when the run scraped GPU telemetry
    (its gpu_metrics.json exists); nothing otherwise. `goodput report` calls it too."""
    import json

    from metrics.results import json_object, number_or_none, object_or_empty, write_summary
    from metrics.server import gpu_section, read_gpu_document

    path = out / GPU_FILE
    if not path.is_file():
        return
    document = read_gpu_document(json.loads(path.read_text()))
    run, throughput = object_or_empty(summary.get("run")), object_or_empty(summary.get("throughput"))
    window = object_or_empty(run.get("window"))
    rate = number_or_none(throughput.get("output_tokens_per_s"))
    duration = number_or_none(throughput.get("duration_s"))
    section = gpu_section(document, start_unix_s=float(number_or_none(run.get("start_unix_s")) or 0.0),
                          window_start_s=number_or_none(window.get("start_s")),
                          window_end_s=number_or_none(window.get("end_s")),
                          output_tokens=rate * duration if rate is not None and duration else None)
    if section is not None:
        summary["gpu"] = json_object(section.to_json())
        write_summary(out, summary)
