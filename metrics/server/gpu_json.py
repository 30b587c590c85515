"""The JSON of gpu_metrics.json (loadgen.run.gpu_scrape writes it, metrics.server.gpu reads it back): one
sample per GPU and scrape, the scraped endpoints; checked once where the file is read (read_gpu_document).
Light: the standard library only, as the scraper imports it before the first request."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from metrics.results import number_or_none, text_or_none

# A sample's figures, as loadgen.run.gpu_scrape names them after DCGM's families.
Figure = Literal["util_pct", "power_w", "fb_used_mib", "sm_active"]
FIGURES: tuple[Figure, ...] = ("util_pct", "power_w", "fb_used_mib", "sm_active")


class GpuReading(TypedDict):
    """One GPU in one scrape: its labels (`gpu`, `UUID`, `modelName`, `Hostname`) and the figures of the
    families the exporter served."""

    gpu: str | None
    uuid: str | None
    model_name: str | None
    hostname: str | None
    util_pct: NotRequired[float]
    power_w: NotRequired[float]
    fb_used_mib: NotRequired[float]
    sm_active: NotRequired[float]


class GpuSample(GpuReading):
    """A line of gpu_metrics.json's `samples`: a reading, the endpoint it came from and when."""

    source: str
    unix_s: float


class GpuSourceJSON(TypedDict, total=False):
    """A line of gpu_metrics.json's `sources` (loadgen.run.gpu_scrape.GpuScraper.source: every key but
    `last_failure` there; a file written by hand may lack some)."""

    name: str
    url: str
    interval_s: float
    scrapes: int
    failed_scrapes: int
    last_failure: str


class GpuDocument(TypedDict):
    """gpu_metrics.json, as read back (read_gpu_document)."""

    sources: list[GpuSourceJSON]
    samples: list[GpuSample]


def _sample(raw: object) -> GpuSample | None:
    """A sample of the file, its fields checked; None for one with no time."""
    if not isinstance(raw, dict) or (unix_s := number_or_none(raw.get("unix_s"))) is None:
        return None
    sample = GpuSample(source=text_or_none(raw.get("source")) or "", unix_s=unix_s,
                       gpu=text_or_none(raw.get("gpu")), uuid=text_or_none(raw.get("uuid")),
                       model_name=text_or_none(raw.get("model_name")), hostname=text_or_none(raw.get("hostname")))
    for key in FIGURES:
        if (value := number_or_none(raw.get(key))) is not None:
            sample[key] = value
    return sample


def _source(raw: object) -> GpuSourceJSON:
    """A source of the file with the keys of the right type, in the order the scraper writes them."""
    got = raw if isinstance(raw, dict) else {}
    source = GpuSourceJSON()
    if isinstance(name := got.get("name"), str):
        source["name"] = name
    if isinstance(url := got.get("url"), str):
        source["url"] = url
    if (interval_s := number_or_none(got.get("interval_s"))) is not None:
        source["interval_s"] = interval_s
    if isinstance(scrapes := got.get("scrapes"), int):
        source["scrapes"] = scrapes
    if isinstance(failed := got.get("failed_scrapes"), int):
        source["failed_scrapes"] = failed
    if isinstance(last := got.get("last_failure"), str):
        source["last_failure"] = last
    return source


def read_gpu_document(raw: object) -> GpuDocument:
    """gpu_metrics.json's parsed JSON, checked once: samples without a time (or not objects) dropped."""
    doc = raw if isinstance(raw, dict) else {}
    samples = [s for s in map(_sample, doc.get("samples") or []) if s is not None]
    return GpuDocument(sources=list(map(_source, doc.get("sources") or [])), samples=samples)
